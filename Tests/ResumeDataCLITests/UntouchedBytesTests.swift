import Foundation
import ResumeData
import Testing

@testable import ResumeDataCLI

/// Healthy blobs laid out otherwise than this toolkit's writers lay them out: what another
/// producer may write. Nothing needs repairing in any of them for iOS 13.
enum OtherLayout: String, CaseIterable, Sendable {
  case v2IndentedWithSpaces = "v2 XML indented with spaces"
  case keyedXMLIndentedWithSpaces = "keyed XML archive indented with spaces"
  case keyedWithWideOffsets = "binary keyed archive with 8-byte offsets"

  /// The blob's bytes.
  func bytes() throws -> Data {
    switch self {
    case .v2IndentedWithSpaces: try Self.indentedWithSpaces(resumeFixture("v2.xml.plist"))
    case .keyedXMLIndentedWithSpaces:
      try Self.indentedWithSpaces(resumeFixture("keyed-v5-webkit-xml.archive.plist"))
    case .keyedWithWideOffsets: try Self.widenedOffsets(resumeFixture("keyed-v4.archive"))
    }
  }

  /// XML with each tab of indentation as two spaces.
  private static func indentedWithSpaces(_ xml: Data) -> Data {
    Data(text(xml).replacingOccurrences(of: "\t", with: "  ").utf8)
  }

  /// A binary plist whose offset table has 8-byte entries, as any reader accepts and no writer
  /// that picks the smallest size makes.
  private static func widenedOffsets(_ plist: Data) -> Data {
    let bytes = [UInt8](plist)
    let trailer = bytes.count - 32
    func number(_ start: Int, _ size: Int) -> Int {
      bytes[start..<(start + size)].reduce(0) { $0 << 8 | Int($1) }
    }
    let offsetSize = Int(bytes[trailer + 6])
    let count = number(trailer + 8, 8)
    let table = number(trailer + 24, 8)
    var widened = Array(bytes[..<table])
    for index in 0..<count {
      let offset = number(table + index * offsetSize, offsetSize)
      widened += (0..<8).reversed().map { UInt8(truncatingIfNeeded: offset >> ($0 * 8)) }
    }
    var newTrailer = Array(bytes[trailer...])
    newTrailer[6] = 8
    widened += newTrailer
    return Data(widened)
  }
}

@Suite("Untouched blobs keep the bytes they were read from")
struct UntouchedBytesTests {
  @Test(
    "The library gives an untouched blob's own bytes, and an edited one's encoding",
    arguments: OtherLayout.allCases)
  func library(layout: OtherLayout) throws {
    let input = try layout.bytes()
    let blob = try ResumeData(decoding: input)
    // The premise: written afresh, the blob would not be these bytes.
    #expect(try blob.encoded() != input)
    #expect(try blob.encoded(keepingUntouchedBytes: true) == input)
    let repair = try blob.repaired(for: .ios13Later)
    #expect(repair.findings == [])
    #expect(try repair.blob?.encoded(keepingUntouchedBytes: true) == input)
    var edited = blob
    _ = try edited.setHeader("X-Edited", "1")
    let written = try edited.encoded()
    #expect(try edited.encoded(keepingUntouchedBytes: true) == written)
    #expect(written != input)
    #expect(
      try ResumeData(decoding: written).currentRequest?.headerFields.first {
        $0.name == "X-Edited"
      }?.value == "1")
  }

  @Test("repair FILE writes an untouched blob back byte for byte", arguments: OtherLayout.allCases)
  func repairFile(layout: OtherLayout) throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let input = try layout.bytes()
    let path = try scratch.write(input, to: "in")
    let output = scratch.path("out")
    let (status, captured) = run(["repair", path, "--target", "ios13+", "-o", output])
    #expect(status == .success)
    #expect(text(captured.standardOutput) == "no changes needed\n")
    #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == input)
  }

  @Test("batch gives an untouched blob back as it came", arguments: OtherLayout.allCases)
  func batch(layout: OtherLayout) throws {
    let input = try layout.bytes()
    let (status, captured) = run(
      ["batch", "--target", "ios13+"], input: Data(blobRecord("7", input).utf8))
    #expect(status == .success)
    let result = try #require(try resultObjects(captured.standardOutput).first)
    let output = try #require(result["output"] as? [String: Any])
    #expect(output["blob"] as? String == input.base64EncodedString())
    #expect(result["findings"] as? [Any] != nil)
    #expect((result["findings"] as? [Any])?.isEmpty == true)
  }

  @Test(
    "repair DIR --in-place leaves an untouched blob's file alone, with no backup",
    arguments: OtherLayout.allCases)
  func repairDirectory(layout: OtherLayout) throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let input = try layout.bytes()
    let path = try scratch.write(input, to: "blob")
    let (status, captured) = run([
      "repair", scratch.url.path, "--target", "ios13+", "--in-place", "--backup",
    ])
    #expect(status == .success)
    #expect(text(captured.standardOutput).hasPrefix("\(path): unchanged\n"))
    #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == input)
    #expect(!FileManager.default.fileExists(atPath: path + ".bak"))
  }

  @Test("A blob a rule changes is written afresh, whatever its input layout")
  func changedIsWrittenAfresh() throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let fixture = try resumeFixture("v4-byte-range.xml.plist")
    let spaced = Data(text(fixture).replacingOccurrences(of: "\t", with: "  ").utf8)
    let path = try scratch.write(spaced, to: "in")
    let (status, captured) = run(["repair", path, "--target", "ios11.0-11.2", "-o", "-"])
    #expect(status == .success)
    let (_, fromCanonical) = run([
      "repair", resumeFixturePath("v4-byte-range.xml.plist"), "--target", "ios11.0-11.2", "-o",
      "-",
    ])
    #expect(captured.standardOutput == fromCanonical.standardOutput)
    #expect(text(captured.standardOutput).contains("\t<key>"))
  }
}

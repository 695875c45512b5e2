import Foundation
import PropertyList
@_spi(Differential) import ResumeData
import TestSupport
import Testing

/// Every blob fixture: the resume blobs, their truncations and the repaired blobs.
let capturedFixtures = fixturesRecursively("resume") + fixturesRecursively("repair")

/// The text forms a blob is kept in, each as a writer of that text.
enum TextForm: String, CaseIterable, Sendable {
  case base64, base64Wrapped, base64URLSafe, base64DataURI, base64CRLF
  case hexXXD, hexPlain, hex0x, hexSpacedBytes, hexUpper
  case nsDataDescription, nsDataDescriptionMultiline

  var form: CapturedForm {
    switch self {
    case .base64, .base64Wrapped, .base64URLSafe, .base64DataURI, .base64CRLF: .base64
    case .hexXXD, .hexPlain, .hex0x, .hexSpacedBytes, .hexUpper: .hex
    case .nsDataDescription, .nsDataDescriptionMultiline: .description
    }
  }

  static func hex(_ bytes: Data) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

  func text(_ bytes: Data) -> String {
    let hex = Self.hex(bytes)
    switch self {
    case .base64: return bytes.base64EncodedString()
    case .base64Wrapped: return bytes.base64EncodedString(options: .lineLength76Characters) + "\n"
    case .base64URLSafe:
      return bytes.base64EncodedString().replacingOccurrences(of: "+", with: "-")
        .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    case .base64DataURI:
      return "data:application/octet-stream;base64," + bytes.base64EncodedString()
    case .base64CRLF:
      return bytes.base64EncodedString(options: [
        .lineLength64Characters, .endLineWithCarriageReturn, .endLineWithLineFeed,
      ])
    case .hexXXD:
      return stride(from: 0, to: hex.count, by: 60).map { start in
        let from = hex.index(hex.startIndex, offsetBy: start)
        return String(hex[from..<(hex.index(from, offsetBy: min(60, hex.count - start)))])
      }.joined(separator: "\n") + "\n"
    case .hexPlain: return hex
    case .hex0x: return "0x" + hex
    case .hexSpacedBytes: return bytes.map { String(format: "%02x", $0) }.joined(separator: " ")
    case .hexUpper: return hex.uppercased()
    case .nsDataDescription, .nsDataDescriptionMultiline:
      let groups = stride(from: 0, to: bytes.count, by: 4).map {
        Self.hex(bytes[(bytes.startIndex + $0)..<min(bytes.startIndex + $0 + 4, bytes.endIndex)])
      }
      if self == .nsDataDescription { return "<" + groups.joined(separator: " ") + ">" }
      return "<"
        + groups.joined(separator: " ").split(separator: " ", omittingEmptySubsequences: false)
        .enumerated().map { $0.offset % 8 == 7 ? $0.element + "\n" : $0.element + " " }.joined()
        .trimmingCharacters(in: .whitespaces) + ">"
    }
  }
}

@Suite("Captured forms")
struct CapturedFormTests {
  @Test(
    "Every fixture blob through every text form comes back byte for byte, detected and forced",
    arguments: capturedFixtures)
  func roundTrip(_ name: String) throws {
    let bytes = try fixture(name)
    for form in TextForm.allCases {
      let text = Data(form.text(bytes).utf8)
      let detected = try CapturedBlob.read(text)
      #expect(detected.bytes == bytes, "\(form)")
      #expect(detected.form == form.form, "\(form)")
      let forced = try CapturedBlob.read(text, as: form.form)
      #expect(forced.bytes == bytes, "\(form)")
    }
  }

  @Test("A fixture blob read as it is stays raw", arguments: capturedFixtures)
  func rawStaysRaw(_ name: String) throws {
    let bytes = try fixture(name)
    let read = try CapturedBlob.read(bytes)
    #expect(read.form == .raw)
    #expect(read.bytes == bytes)
    #expect(read.detail == "the blob's own bytes")
  }

  @Test("The details say how the text was read")
  func details() throws {
    let bytes = try fixture("resume/v2.binary.plist")
    let cases: [(TextForm, String)] = [
      (.base64, "base64 text"), (.base64Wrapped, "base64 text (on 35 lines)"),
      (.base64URLSafe, "base64 text (URL-safe, without padding)"),
      (.base64DataURI, "base64 text (after a data: URI prefix)"),
      (.hexXXD, "hex text (on 67 lines)"), (.hexPlain, "hex text"), (.hex0x, "hex text (after 0x)"),
      (.hexSpacedBytes, "hex text (spaced)"),
      (.nsDataDescription, "the description of NSData (<…>, as NSLog and the debugger print it)"),
    ]
    for (form, detail) in cases {
      #expect(try CapturedBlob.read(Data(form.text(bytes).utf8)).detail == detail, "\(form)")
    }
    let modern =
      "{length = 8, bytes = 0x62706c69 73743030}"
    let read = try CapturedBlob.read(Data(modern.utf8), as: .description)
    #expect(read.bytes == Data("bplist00".utf8))
    #expect(
      read.detail
        == "the description of Data as iOS 13 and later print it, whole ({length = 8, bytes = 0x…})"
    )
  }

  /// Each fixture whose dictionary a description shows: its description, and the generation to
  /// ask for where the keys cannot tell (InfoVersion 4 is iOS 11's XML and iOS 12's archive).
  static let described: [(String, ResumeDataGeneration?, bytesEqual: Bool)] = [
    ("resume/v1.xml.plist", nil, true), ("resume/v2.xml.plist", nil, true),
    ("resume/v2.binary.plist", nil, false), ("resume/v4-byte-range.xml.plist", nil, true),
    ("resume/ios10.0-v2.xml.plist", nil, true),
    ("resume/unsafe-temp-file-name.xml.plist", nil, true),
    ("resume/keyed-v4.archive", .keyed, false), ("resume/ios12-empty.archive", .keyed, false),
    ("resume/keyed-v5-response.archive", nil, false),
    ("resume/keyed-v5-unknown-key.archive", nil, false),
    ("resume/keyed-v5-webkit-xml.archive.plist", nil, false), ("resume/safari.archive", nil, false),
    ("resume/segmented.archive", nil, false),
    ("resume/network-framework-webkit.archive", nil, false),
    ("repair/remove-byte-range.after.xml.plist", nil, true),
    ("repair/move-local-path.after.xml.plist", nil, true),
  ]

  @Test(
    "A description of each fixture's dictionary is recovered to a blob equal to the fixture",
    arguments: described)
  func recovered(_ name: String, _ generation: ResumeDataGeneration?, bytesEqual: Bool) throws {
    let bytes = try fixture(name)
    let original = try ResumeData(decoding: bytes)
    for escaping in [false, true] {
      let description = OpenStepPropertyListWriter(escapingNonASCII: escaping).write(
        .dictionary(
          PropertyListDictionary(original.entries.sortedEntries.map { ($0.key, $0.value) })))
      let captured = try CapturedBlob.read(description, generation: generation)
      #expect(captured.form == .description)
      #expect(captured.findings.map(\.code) == ["recovered-from-description"])
      let recovered = try ResumeData(decoding: captured.bytes)
      #expect(ResumeDifferential.recoveryDifference(recovered, original) == nil, "\(name)")
      if bytesEqual { #expect(captured.bytes == bytes, "\(name)") }
    }
  }

  @Test("The finding says what recovery chose")
  func findingText() throws {
    let v2 = try ResumeData(decoding: try fixture("resume/v2.xml.plist"))
    let text = OpenStepPropertyListWriter().write(.dictionary(v2.entries))
    #expect(
      try CapturedBlob.read(text).findings
        == [
          Finding(
            "recovered-from-description", .info,
            "recovered from a description of the resume dictionary: written as a v2 blob (InfoVersion 2) in XML, keys sorted, as CFNetwork wrote v2 blobs; NSURLSessionResumeBytesReceived and NSURLSessionResumeInfoVersion made integers again"
          )
        ])
    let v4 = try ResumeData(decoding: try fixture("resume/keyed-v4.archive"))
    let v4Text = OpenStepPropertyListWriter().write(.dictionary(v4.entries))
    let v4Read = try CapturedBlob.read(v4Text)
    #expect(try ResumeData(decoding: v4Read.bytes).generation == .v4)
    #expect(
      v4Read.findings.first?.message
        == "recovered from a description of the resume dictionary: written as a v4 blob (InfoVersion 4; iOS 12 wrote that number too, as a keyed archive: convert --to keyed if the blob came from iOS 12) in XML, keys sorted, as CFNetwork wrote v4 blobs; NSURLSessionResumeBytesReceived and NSURLSessionResumeInfoVersion made integers again"
    )
  }

  /// Inputs that are no blob, or text of a form that does not decode, and their exact errors.
  static let refused: [(String, CapturedForm?, String, String)] = [
    (
      "YnBsaXN0MDDUAQIDBAUGYmNYJHZlcnNpb25YX", .base64, "captured-text",
      "1:38: base64 of 37 digits, one more than whole bytes take (the text is cut short?)"
    ),
    ("YnBsaXN0MDD!UAQI", .base64, "captured-text", "1:12: '!', which is not base64"),
    (
      "YnBs+aXN0_MDD", .base64, "captured-text",
      "1:10: base64 of both alphabets ('+' or '/' and '-' or '_')"
    ),
    ("YnBs=aXN0", .base64, "captured-text", "1:5: '=' where base64 has no padding"),
    ("YnBsaX=N0", .base64, "captured-text", "1:8: base64 after its padding"),
    (
      "data:text/plain,hello", .base64, "captured-text",
      "1:1: a data: URI that is not base64 (no ;base64, before its data)"
    ),
    (
      "62706c6973743030d", .hex, "captured-text",
      "1:17: an odd number of hex digits: the last byte has one"
    ),
    ("6270 6c6 9", .hex, "captured-text", "1:9: white space inside a byte of hex"),
    ("62706c69zz", .hex, "captured-text", "1:9: 'z', which is not a hex digit"),
    (
      "<62706c69 7374303>", nil, "captured-text",
      "1:18: not a description Foundation prints: data of an odd number of hex digits ('>' after one)"
    ),
    (
      "<62706c69 73743030", nil, "captured-text",
      "1:19: not a description Foundation prints: the input ends inside data (expected '>')"
    ),
    (
      "{length = 9955, bytes = 0x62706c69 73743030 d4010203 04050607 ... 00000000 00002637 }", nil,
      "elided-description",
      "1:63: the description iOS 13 and later print of Data (\"{length = 9955, bytes = 0x… … }\"), which shows only the first 24 and the last 8 bytes: the blob cannot be recovered from it; capture the blob itself: resumeData.base64EncodedString(), or resumeData.write(to:) (in the debugger: po resumeData.base64EncodedString())"
    ),
    (
      "{\n    NSURLSessionDownloadURL = \"https://example.com/a\";\n    NSURLSessionResumeCurrentRequest = {length = 3118, bytes = 0x62706c69 73743030 d4010203 04050607 ... 00000000 00000b5e };\n}",
      nil, "elided-description",
      "3:102: a description whose data is elided (\"{length = 3118, bytes = 0x… … }\", as iOS 13 and later print Data: only its first 24 and last 8 bytes): the blob cannot be recovered from it; capture the blob itself: resumeData.base64EncodedString(), or resumeData.write(to:) (in the debugger: po resumeData.base64EncodedString())"
    ),
    (
      "{length = 9, bytes = 0x62706c69 73743030}", nil, "captured-text",
      "1:24: the description says 9 bytes and shows 8: the blob cannot be recovered from it"
    ),
    (
      "9955 bytes", nil, "not-a-blob",
      "\"9955 bytes\" is how the debugger prints Data (po resumeData): only its size; capture the blob itself: resumeData.base64EncodedString(), or resumeData.write(to:) (in the debugger: po resumeData.base64EncodedString())"
    ),
    (
      "1048576", nil, "not-a-blob",
      "the number 1048576, not a blob (a byte count such as NSURLSessionResumeBytesReceived, or a task's identifier, is no resume data); capture the blob itself: resumeData.base64EncodedString(), or resumeData.write(to:)"
    ),
    (
      "/var/mobile/Containers/Data/Application/1A2B/tmp/CFNetworkDownload_x1.tmp\n", nil,
      "not-a-blob",
      "a file path (/var/mobile/Containers/Data/Application/1A2B/tmp/CFNetworkDownload_x1.tmp), not a blob: give the file itself; a CFNetworkDownload_*.tmp file is a partial download, not its resume data"
    ),
    (
      "{\"tempFilePath\": \"/data/user/0/com.example/cache/a.zip.part\", \"eTag\": \"\\\"abc\\\"\"}",
      nil,
      "not-a-blob",
      "JSON of Android's resume state ({tempFilePath, eTag}: a partial file and its validator), not an Apple resume blob; it resumes with a Range request of its own, not with URLSession"
    ),
    (
      "{\"task\": {\"url\": \"https://example.com\"}, \"data\": \"YnBsaXN0MDA=\"}", nil,
      "not-a-blob",
      "a JSON document, not a blob: `resumedata inspect` lists the blobs inside one, and --at KEYPATH picks one"
    ),
    (
      "hello, world", nil, "not-a-blob",
      "text that is not a resume blob in any form this tool reads (base64, hex, or a description Foundation prints); capture the blob itself: resumeData.base64EncodedString(), or resumeData.write(to:)"
    ),
    (
      "c2FtcGxlIHRleHQ=", nil, "not-a-blob",
      "text that decodes (as base64, 11 bytes starting 0x73616d706c652074) to no resume blob: a blob starts with bplist00, <?xml or a Network.framework archive's masked magic"
    ),
    (
      "{ NSURLSessionDownloadURL = \"https://example.com/a\"; NSURLSessionResumeBytesReceived = 12x; }",
      nil, "wrong-type",
      "NSURLSessionResumeBytesReceived: the string \"12x\" where the blob holds a whole number"
    ),
    (
      "{ NSURLSessionDownloadURL = \"https://example.com/a\"; NSURLSessionResumeCurrentRequest = \"YnBs\"; }",
      nil, "wrong-type",
      "NSURLSessionResumeCurrentRequest: the string \"YnBs\" where the blob holds data (a description shows it as <62706c69 …>)"
    ),
    (
      "{ name = Tiercel; count = 3; }", nil, "not-a-blob",
      "an OpenStep dictionary that holds none of the resume-data keys (keys: name, count), not the description of a resume dictionary"
    ),
    (
      "{ NSURLSessionDownloadURL = \"https://example.com/a\"; NSURLSessionResumeBytesReceived = 1 }",
      nil, "captured-text",
      "1:90: not a description Foundation prints: expected ';' after the value of \"NSURLSessionResumeBytesReceived\", not '}'"
    ),
  ]

  @Test(
    "Truncated, elided, odd-length and garbage forms get their exact errors", arguments: refused)
  func errors(_ text: String, _ form: CapturedForm?, _ code: String, _ message: String) {
    do {
      let read = try CapturedBlob.read(Data(text.utf8), as: form)
      Issue.record("read as \(read.form): \(read.detail)")
    } catch let error as ResumeDataError {
      #expect(error.code.rawValue == code)
      #expect(error.description == message)
    } catch {
      Issue.record("\(error)")
    }
  }

  @Test("Forced raw hands the text over as it is; ResumeData.decoding(captured:) reads any form")
  func library() throws {
    let bytes = try fixture("resume/keyed-v4.archive")
    let text = Data(bytes.base64EncodedString().utf8)
    #expect(try CapturedBlob.read(text, as: .raw).bytes == text)
    let (resume, captured) = try ResumeData.decoding(captured: text)
    #expect(resume.generation == .keyed)
    #expect(captured.form == .base64)
    let system = AppleSystem(.iOS, 17, 4)
    let answer = ResumeData.forURLSession(
      text: bytes.base64EncodedString(options: .lineLength64Characters), on: system,
      partialFile: .notChecked)
    #expect(answer.resumeData == bytes)
    let hexed = ResumeData.forURLSession(
      captured: try fixture("captured/keyed-v4.hex"), on: system, partialFile: .notChecked)
    #expect(hexed.resumeData == bytes)
    #expect(hexed.findings.isEmpty)
    let elided = ResumeData.forURLSession(
      text: "{length = 9955, bytes = 0x62706c69 ... 00002637 }", on: system,
      partialFile: .notChecked)
    #expect(elided.resumeData == nil)
    if case .startOver(let reason, _) = elided { #expect(reason.code == "elided-description") }
  }
}

@Suite(
  "Captured forms on the peer suites",
  .enabled(if: peerSuitesPresent, "../shared/peer-suites is absent: peer conformance tests skipped")
)
struct CapturedPeerTests {
  @Test("No peer-suite file is read as a text form: a plist stays raw, the rest is no blob")
  func noFalseForms() throws {
    let root = peerSuites
    let files =
      FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)?
      .compactMap { $0 as? URL }.filter { !$0.hasDirectoryPath } ?? []
    #expect(files.count > 100)
    for file in files {
      let bytes = try Data(contentsOf: file)
      do {
        let read = try CapturedBlob.read(bytes)
        #expect(read.form == .raw, "\(file.path)")
        #expect(read.bytes == bytes)
      } catch let error as ResumeDataError {
        #expect(
          [.notABlob, .capturedText].contains(error.code), "\(file.path): \(error.code)")
      }
    }
  }
}

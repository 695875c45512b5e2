import Foundation
import PropertyList
import ResumeData
import ResumeDataCLI
import Testing

@Suite("resumedata repair")
struct RepairCommandTests {
  @Test("For iOS 11.0–11.2 the ByteRange key goes, and every other value stays")
  func byteRange() throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let input = resumeFixturePath("v4-byte-range.xml.plist")
    let output = scratch.path("out.plist")
    let (status, captured) = run(["repair", input, "--target", "ios11.0-11.2", "-o", output])
    #expect(status == .success)
    #expect(captured.standardError == "")
    #expect(
      text(captured.standardOutput)
        == "info remove-byte-range: removed NSURLSessionResumeByteRange (1048576-) (NSURLSessionResumeByteRange)\n"
    )
    let before = try decodedResume(at: input)
    let after = try decodedResume(at: output)
    #expect(after.generation == .v4)
    #expect(after.container == .xmlPlist)
    #expect(after.byteRange == nil)
    var expected = before.entries
    expected[ResumeDataKey.byteRange] = nil
    #expect(after.entries == expected)
    #expect(after.entries.keys == before.entries.keys.filter { $0 != ResumeDataKey.byteRange })
  }

  @Test(
    "Each target gets a generation it reads, with the URL, byte count and ETag kept",
    arguments: [
      // iOS 13 still reads plain v2 blobs: nothing to convert.
      ("v2.xml.plist", "ios13+", ResumeDataGeneration.v2, 2 as Int?),
      ("network-framework.blob", "ios13+", .keyed, 5),
      ("keyed-v5-unknown-key.archive", "ios12", .keyed, 4),
      ("keyed-v5-unknown-key.archive", "macos10.14", .keyed, 4),
      ("keyed-v5-unknown-key.archive", "ios10.2-10.3", .v2, 2),
      ("v4-byte-range.xml.plist", "macos10.12.2-10.12.6", .v2, 2),
      ("safari.archive", "ios11.3+", .v4, 4),
      ("v2.binary.plist", "network-framework", .networkFramework, nil),
      ("network-framework-webkit.archive", "linux", .networkFrameworkWebKit, nil),
    ])
  func targets(
    file: String, target: String, generation: ResumeDataGeneration, infoVersion: Int?
  ) throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let output = scratch.path("out")
    let (status, captured) = run([
      "repair", resumeFixturePath(file), "--target", target, "-o", output,
    ])
    #expect(status == .success)
    #expect(captured.standardError == "")
    let before = try ResumeData(decoding: resumeFixture(file))
    let after = try decodedResume(at: output)
    #expect(after.generation == generation)
    #expect(after.infoVersion == infoVersion)
    #expect(after.downloadURL == before.downloadURL)
    // Network.framework's object has no byte count of its own; it keeps the validators in the
    // response it holds.
    let carriesCounts = generation != .networkFramework
    #expect(after.bytesReceived == (carriesCounts ? before.bytesReceived : nil))
    #expect(after.entityTag == before.entityTag)
    #expect(after.currentRequest?.url == before.currentRequest?.url)
  }

  @Test("A blob that needs nothing is written back byte for byte")
  func untouched() throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let output = scratch.path("out.plist")
    let (status, captured) = run([
      "repair", resumeFixturePath("v2.binary.plist"), "--target", "linux", "-o", output,
    ])
    #expect(status == .success)
    #expect(text(captured.standardOutput) == "no changes needed\n")
    #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == resumeFixture("v2.binary.plist"))
  }

  @Test("With -o - the blob goes to standard output and the findings to standard error")
  func standardOutput() throws {
    let (status, captured) = run(
      ["repair", "-", "--target", "ios11.0-11.2", "-o", "-"],
      input: try resumeFixture("v4-byte-range.xml.plist"))
    #expect(status == .success)
    #expect(
      captured.standardError
        == "info remove-byte-range: removed NSURLSessionResumeByteRange (1048576-) (NSURLSessionResumeByteRange)\n"
    )
    let repaired = try ResumeData(decoding: captured.standardOutput)
    #expect(repaired.byteRange == nil)
    #expect(repaired.generation == .v4)
  }

  @Test("--temp-dir moves a LocalPath from an old sandbox into the directory")
  func temporaryDirectory() throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let output = scratch.path("out.plist")
    let (status, _) = run([
      "repair", resumeFixturePath("v1.xml.plist"), "--target", "linux", "--temp-dir",
      scratch.url.path, "-o", output,
    ])
    #expect(status == .success)
    let repaired = try decodedResume(at: output)
    #expect(repaired.localPath == scratch.url.appendingPathComponent("download.tmp").path)
  }

  @Test("--truncate-partial-file hands a segmented download over: the file cut to the prefix")
  func handOff() throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let partial = scratch.path("CFNetworkDownload_v4w5x6.tmp")
    try Data(count: 4_194_304).write(to: URL(fileURLWithPath: partial))
    let output = scratch.path("out.archive")
    let arguments = [
      "repair", resumeFixturePath("segmented.archive"), "--target", "ios13+", "-o", output,
      "--temp-dir", scratch.url.path,
    ]
    // Without leave to truncate: the warning, the blob written as it was, the file untouched.
    let (warned, warning) = run(arguments)
    #expect(warned == .success)
    #expect(
      text(warning.standardOutput)
        == "warning hand-off-segments: left as it is: the partial file is allocated to all 4194304 bytes and holds segments past byte 1048576, the prefix ios13+ can resume from; truncate the file to 1048576 bytes first (`repair --temp-dir DIR --truncate-partial-file` does, dropping the segments past it) (ResumeDataKitSegments)\n"
    )
    #expect(try decodedResume(at: output).segments != nil)
    #expect(try FileManager.default.attributesOfItem(atPath: partial)[.size] as? Int == 4_194_304)
    let (status, captured) = run(arguments + ["--truncate-partial-file"])
    #expect(status == .success)
    #expect(
      text(captured.standardOutput)
        == "info hand-off-segments: the partial file CFNetworkDownload_v4w5x6.tmp truncated from 4194304 to 1048576 bytes, the prefix ios13+ can resume from (1048576 bytes of later segments dropped), and the segment map removed (ResumeDataKitSegments)\n"
    )
    let repaired = try decodedResume(at: output)
    #expect(repaired.segments == nil)
    #expect(repaired.bytesReceived == 1_048_576)
    #expect(try FileManager.default.attributesOfItem(atPath: partial)[.size] as? Int == 1_048_576)
  }

  @Test("--truncate-partial-file without --temp-dir is a usage error")
  func handOffNeedsDirectory() throws {
    let (status, captured) = run([
      "repair", resumeFixturePath("segmented.archive"), "--target", "ios13+", "-o", "-",
      "--truncate-partial-file",
    ])
    #expect(status == .usage)
    #expect(
      captured.standardError
        == "Error: --truncate-partial-file needs --temp-dir DIR, the directory of the partial file\nRun 'resumedata repair --help' for usage.\n"
    )
    #expect(captured.standardOutput.isEmpty)
  }

  @Test("--json reports the written blob and the findings")
  func json() throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let input = resumeFixturePath("v4-byte-range.xml.plist")
    let output = scratch.path("out.plist")
    let (status, captured) = run([
      "repair", input, "--target", "ios11.0-11.2", "-o", output, "--json",
    ])
    #expect(status == .success)
    #expect(
      text(captured.standardOutput) == """
        {
          "schemaVersion": 1,
          "input": "\(input)",
          "output": "\(output)",
          "written": true,
          "generation": "v4",
          "container": "xml-plist",
          "infoVersion": 4,
          "findings": [
            {"code": "remove-byte-range", "severity": "info", "message": "removed NSURLSessionResumeByteRange (1048576-)", "path": "NSURLSessionResumeByteRange"}
          ]
        }

        """)
  }

  @Test("The iOS 12 empty blob is refused: findings printed, nothing written, exit 1")
  func refused() throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let output = try scratch.write(Data("existing".utf8), to: "out")
    let (status, captured) = run(
      ["repair", "-", "--target", "ios13+", "-o", output], input: try emptyKeyedBlob())
    #expect(status == .failure)
    let size = try emptyKeyedBlob().count
    #expect(
      text(captured.standardOutput)
        == "error refuse-empty-blob: the blob is \(size) bytes, too small to hold a request (the iOS 12.0–12.2 cancel-before-first-byte case): start the download over; no repaired blob is written\n"
    )
    #expect(
      captured.standardError
        == "Error: -: the blob cannot be resumed on ios13+; nothing was written\n")
    #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == Data("existing".utf8))
  }

  @Test("A refusal in JSON says nothing was written")
  func refusedJSON() throws {
    let (status, captured) = run(
      ["repair", "-", "--target", "linux", "-o", "-", "--json"], input: try emptyKeyedBlob())
    #expect(status == .failure)
    #expect(captured.standardOutput.isEmpty)
    let report = captured.standardError.components(separatedBy: "\nError: ")
    #expect(report.count == 2)
    let object =
      try JSONSerialization.jsonObject(with: Data(report[0].utf8)) as? [String: Any]
    #expect(object?["written"] as? Bool == false)
    #expect(object?["generation"] is NSNull)
    let findings = object?["findings"] as? [[String: Any]]
    #expect(findings?.map { $0["code"] as? String } == ["refuse-empty-blob"])
    #expect(report[1] == "-: the blob cannot be resumed on linux; nothing was written\n")
  }

  @Test("A binary blob is not written to a terminal")
  func binaryToTerminal() {
    let (status, captured) = run(
      [
        "repair", resumeFixturePath("keyed-v5-unknown-key.archive"), "--target", "linux", "-o", "-",
      ],
      terminal: true)
    #expect(status == .usage)
    #expect(captured.standardOutput.isEmpty)
    #expect(
      captured.standardError
        == "Error: refusing to write a binary keyed-archive blob to a terminal; use -o FILE or redirect the output\nRun 'resumedata repair --help' for usage.\n"
    )
  }

  @Test("The help names every target")
  func help() {
    let (status, captured) = run(["repair", "--help"])
    #expect(status == .success)
    let help = text(captured.standardOutput)
    #expect(help.contains("\nUSAGE: resumedata repair FILE|- --target T -o OUT|-"))
    for name in RepairTarget.names {
      #expect(help.contains(name), "\(name)")
    }
  }
}

import Foundation
import PropertyList
import ResumeData
import Synchronization
import TestSupport
import Testing

@testable import ResumeDataCLI

/// One NDJSON record holding a blob.
func blobRecord(_ id: String, _ blob: Data) -> String {
  "{\"id\":\(id),\"blob\":\"\(blob.base64EncodedString())\"}"
}

/// The result lines of a batch run, each parsed.
func resultObjects(_ output: Data) throws -> [[String: Any]] {
  try text(output).split(separator: "\n", omittingEmptySubsequences: false).dropLast().map {
    try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
  }
}

/// The result line an input line that is not a record gets.
func invalidRecordLine(
  _ line: Int, id: String = "null", kind: String = "invalid-record", location: String?,
  _ message: String
) -> String {
  let location = location.map { "\"\($0)\"" } ?? "null"
  return
    "{\"schemaVersion\":1,\"input\":\"-\",\"line\":\(line),\"id\":\(id),\"ok\":false,"
    + "\"generation\":null,\"container\":null,\"resumable\":null,\"findings\":[],"
    + "\"output\":null,\"error\":{\"kind\":\"\(kind)\",\"file\":null,\"location\":\(location),"
    + "\"message\":\"\(message)\"}}"
}

@Suite("resumedata batch")
struct BatchCommandTests {
  /// Lines that are not records, with the exact result each gets (as line 1).
  static let invalidLines: [(String, String)] = [
    ("", invalidRecordLine(1, location: "column 1", "empty line; expected a JSON object")),
    ("garbage", invalidRecordLine(1, location: "column 1", "a record must be a JSON object")),
    ("[1]", invalidRecordLine(1, location: "column 1", "a record must be a JSON object")),
    (
      "\u{FEFF}{\"id\":1,\"blob\":\"\"}",
      invalidRecordLine(
        1, location: "column 1",
        "the line starts with a UTF-8 byte-order mark, which JSON lines do not take "
          + "(save the file without one)")
    ),
    (
      "{}",
      invalidRecordLine(
        1, location: "column 1",
        "a record needs a \\\"blob\\\", a \\\"text\\\" or a \\\"path\\\"")
    ),
    (
      "{\"id\":7}",
      invalidRecordLine(
        1, id: "7", location: "column 1",
        "a record needs a \\\"blob\\\", a \\\"text\\\" or a \\\"path\\\"")
    ),
    (
      "{\"id\":7,\"blob\":\"AAAA\",\"path\":\"x\"}",
      invalidRecordLine(
        1, id: "7", location: "column 23",
        "a record has one \\\"blob\\\", one \\\"text\\\" or one \\\"path\\\"")
    ),
    (
      "{\"id\":1,\"id\":2,\"blob\":\"\"}",
      invalidRecordLine(1, id: "1", location: "column 9", "duplicate \\\"id\\\"")
    ),
    (
      "{\"id\":01,\"blob\":\"\"}",
      invalidRecordLine(1, location: "column 8", "a number has no leading zeros")
    ),
    (
      "{\"id\":\"a\",\"blob\":5}",
      invalidRecordLine(1, id: "\"a\"", location: "column 18", "\\\"blob\\\" must be a string")
    ),
    (
      "{\"id\":\"a\",\"blob\":\"AA\u{1}A\"}",
      invalidRecordLine(
        1, id: "\"a\"", location: "column 21", "a control character must be escaped in a string")
    ),
    (
      "{\"id\":\"\\ud800\",\"blob\":\"\"}",
      invalidRecordLine(1, location: "column 8", "an unpaired surrogate in a \\\\u escape")
    ),
    (
      "{\"id\":\"a\",\"blob\":\"AAAA\"} x",
      invalidRecordLine(1, id: "\"a\"", location: "column 26", "text after the record")
    ),
    (
      "{\"id\":\"a\",\"blob\":\"AAAA\"",
      invalidRecordLine(1, id: "\"a\"", location: "column 24", "expected ',' or '}' in the record")
    ),
    (
      "{\"id\":" + String(repeating: "[", count: 100) + "}",
      invalidRecordLine(1, location: "column 71", "nested deeper than 64 levels")
    ),
    (
      "{\"id\":tru,\"blob\":\"\"}",
      invalidRecordLine(1, location: "column 7", "expected a value")
    ),
    (
      "{\"id\":null,\"blob\":\"not base64!\"}",
      invalidRecordLine(1, location: "column 23", "\\\"blob\\\" is not valid base64: a space")
    ),
    (
      "{\"id\":null,\"blob\":\"QU=D\"}",
      invalidRecordLine(
        1, location: "column 22", "\\\"blob\\\" is not valid base64: '=' before the end")
    ),
    (
      "{\"id\":null,\"blob\":\"QUJ\\u0044\\nQUJD\"}",
      invalidRecordLine(
        1, location: "blob character 5",
        "\\\"blob\\\" is not valid base64: a line break: a record's base64 is one line (base64 -w 0)"
      )
    ),
    (
      "{\"id\":null,\"blob\":\"\"}",
      invalidRecordLine(1, kind: "malformed", location: "@0", "input is empty")
    ),
    (
      "{\"path\":\"\"}",
      invalidRecordLine(1, location: "column 9", "\\\"path\\\" must be a non-empty file name")
    ),
  ]

  @Test(
    "A healthy keyed blob, answered without being decoded, gets the full path's exact result",
    arguments: [
      ([] as [String], "keyed-v4.archive", nil as Int?),
      (["--target", "ios13+"], "keyed-v4.archive", 4),
      (["--target", "linux"], "keyed-v5-unknown-key.archive", nil),
      (["--target", "ios13+"], "hand-off-segments.after.archive", 5),
    ])
  func healthyKeyedBlob(_ options: [String], file: String, infoVersion: Int?) throws {
    let folder = file.hasSuffix(".after.archive") ? "repair" : "resume"
    let blob = try fixture("\(folder)/\(file)")
    let target = options.last.flatMap { RepairTarget(rawValue: $0) }
    // The one pass answers for it (the unknown key's blob excepted: the full path answers).
    #expect(
      (ResumeData.healthyKeyedBlob(blob, for: target) != nil)
        == (file != "keyed-v5-unknown-key.archive"))
    let (status, result) = run(
      ["batch"] + options, input: Data((blobRecord("1", blob) + "\n").utf8))
    #expect(status == .success)
    let head =
      "{\"schemaVersion\":1,\"input\":\"-\",\"line\":1,\"id\":1,\"ok\":true,"
      + "\"generation\":\"keyed\",\"container\":\"keyed-archive\",\"resumable\":true,"
    let expected: String
    if options.isEmpty {
      expected = head + "\"findings\":[],\"output\":null,\"error\":null}\n"
    } else if file == "keyed-v5-unknown-key.archive" {
      // Reported in the output's own diagnosis: the full path's answer.
      #expect(text(result.standardOutput).contains("\"code\":\"unknown-keys\""))
      return
    } else {
      expected =
        head
        + "\"findings\":[],\"output\":{\"generation\":\"keyed\",\"container\":\"keyed-archive\","
        + "\"infoVersion\":\(infoVersion!),\"findings\":[],\"blob\":\"\(blob.base64EncodedString())\","
        + "\"written\":null},\"error\":null}\n"
    }
    #expect(text(result.standardOutput) == expected)
  }

  @Test(
    "With --temp-dir a healthy keyed blob takes the full path, which looks for its partial file",
    arguments: [[], ["--target", "ios13+"]])
  func healthyKeyedBlobWithTemporaryDirectory(_ options: [String]) throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let blob = try fixture("repair/hand-off-segments.after.archive")
    #expect(ResumeData.healthyKeyedBlob(blob, for: .ios13Later) != nil)
    let (status, result) = run(
      ["batch", "--temp-dir", scratch.url.path] + options,
      input: Data((blobRecord("1", blob) + "\n").utf8))
    #expect(status == .success)
    let output = text(result.standardOutput)
    #expect(output.contains("\"code\":\"partial-file-missing\""))
    #expect(output.contains("\"resumable\":false"))
  }

  @Test(
    "A blob written with JSON escapes gives the same result as the same blob written plainly",
    arguments: ["keyed-v5-response.archive", "v2.xml.plist", "network-framework.blob"])
  func escapedBlob(_ file: String) throws {
    let base64 = try fixture("resume/\(file)").base64EncodedString()
    // `\/` for every `/` and `\u0041` for every `A`: the string reads the same.
    let escaped = base64.replacingOccurrences(of: "/", with: "\\/")
      .replacingOccurrences(of: "A", with: "\\u0041")
    #expect(escaped.count > base64.count)
    let (plainStatus, plain) = run(
      ["batch", "--target", "ios13+"], input: Data("{\"id\":1,\"blob\":\"\(base64)\"}\n".utf8))
    let (escapedStatus, written) = run(
      ["batch", "--target", "ios13+"], input: Data("{\"id\":1,\"blob\":\"\(escaped)\"}\n".utf8))
    #expect(plainStatus == .success)
    #expect(escapedStatus == .success)
    #expect(text(written.standardOutput) == text(plain.standardOutput))
    #expect(text(plain.standardOutput).contains("\"ok\":true"))
  }

  @Test(
    "A read failure mid-stream: every line read before it is answered, in order, then exit 66",
    arguments: [1, 2])
  func readFailure(jobs: Int) throws {
    // Lines across several windows (256 a job), then an error from the input.
    let count = 1_300
    let input = Data(
      (0..<count).map { "{\"id\":\($0),\"blob\":\"QQ\"}\n" }.joined().utf8)
    final class Parts: @unchecked Sendable {
      let lock = NSLock()
      var offset = 0
    }
    let parts = Parts()
    let captured = Captured()
    let base = captured.streams()
    let streams = Streams(
      readStandardInput: { input },
      readStandardInputPart: { buffer in
        try parts.lock.withLock {
          guard parts.offset < input.count else { throw POSIXError(.EIO) }
          let take = min(buffer.count, 5_000, input.count - parts.offset)
          input.copyBytes(
            to: buffer.bindMemory(to: UInt8.self), from: parts.offset..<(parts.offset + take))
          parts.offset += take
          return take
        }
      },
      writeStandardOutput: base.writeStandardOutput, writeStandardError: base.writeStandardError,
      standardOutputIsTerminal: false)
    let status = ResumeDataTool.run(["batch", "--jobs", String(jobs)], streams: streams)
    #expect(status == .unreadableInput)
    #expect(captured.standardError.contains("cannot read"))
    let lines = text(captured.standardOutput).split(separator: "\n")
    #expect(lines.count == count)
    for (index, line) in lines.enumerated() {
      #expect(
        line.hasPrefix(
          "{\"schemaVersion\":1,\"input\":\"-\",\"line\":\(index + 1),\"id\":\(index),"))
    }
  }

  @Test("A line that is not a record, or whose blob is not resume data, gets its exact error")
  func invalid() throws {
    for (line, expected) in Self.invalidLines {
      let (status, captured) = run(["batch"], input: Data((line + "\n").utf8))
      #expect(status == .failure, "\(line)")
      #expect(captured.standardError == "")
      #expect(text(captured.standardOutput) == expected + "\n", "\(line)")
    }
  }

  @Test("Invalid UTF-8 inside a string is an invalid record")
  func invalidUTF8() {
    let line = Data("{\"id\":\"".utf8) + Data([0xC3, 0x28]) + Data("\",\"blob\":\"\"}\n".utf8)
    let (_, captured) = run(["batch"], input: line)
    #expect(
      text(captured.standardOutput)
        == invalidRecordLine(1, location: "column 7", "a string is not valid UTF-8") + "\n")
  }

  /// A mix of good, malformed and hostile records, one a line.
  static func mixedInput() throws -> (lines: [String], fixtures: [String?]) {
    var lines: [String] = []
    var fixtures: [String?] = []
    for (index, entry) in resumeFixtureGenerations.enumerated() {
      lines.append(blobRecord("\"f\(index)\"", try resumeFixture(entry.file)))
      fixtures.append(entry.file)
      lines.append(Self.invalidLines[index % Self.invalidLines.count].0)
      fixtures.append(nil)
    }
    lines.append("{\"id\":\"truncated\",\"blob\":\"\(try truncatedBlob().base64EncodedString())\"}")
    fixtures.append(nil)
    lines.append("{\"id\":\"path\",\"path\":\"\(resumeFixturePath("v2.xml.plist"))\"}")
    fixtures.append("v2.xml.plist")
    return (lines, fixtures)
  }

  @Test("Mixed records keep their order and each gets its result; exit 1 when any failed")
  func mixed() throws {
    let (lines, fixtures) = try Self.mixedInput()
    let (status, captured) = run(
      ["batch", "--jobs", "3"], input: Data(lines.joined(separator: "\n").utf8))
    #expect(status == .failure)
    let results = try resultObjects(captured.standardOutput)
    try #require(results.count == lines.count)
    for (index, result) in results.enumerated() {
      #expect(result["line"] as? Int == index + 1)
      if let file = fixtures[index] {
        let resume = try ResumeData(decoding: resumeFixture(file))
        #expect(result["ok"] as? Bool == true, "\(file)")
        #expect(result["generation"] as? String == resume.generation.rawValue)
        #expect(result["container"] as? String == resume.container.rawValue)
        let codes = (result["findings"] as? [[String: Any]])?.compactMap { $0["code"] as? String }
        #expect(codes == resume.findings().map(\.code), "\(file)")
      } else {
        #expect(result["ok"] as? Bool == false, "line \(index + 1)")
      }
    }
    #expect(results.last?["id"] as? String == "path")
    let truncated = results[results.count - 2]
    #expect(truncated["id"] as? String == "truncated")
    let error = try #require(truncated["error"] as? [String: Any])
    #expect(error["kind"] as? String == "malformed")
    #expect(error["file"] is NSNull)
    #expect(error["location"] as? String == "@974")
    #expect(
      error["message"] as? String
        == "trailer offset size 101 is not 1 to 8 bytes"
        + " (no trailer in the last 32 bytes: a file cut short?)")
  }

  @Test("--jobs 1, 2 and 5 give identical output over several windows", arguments: [2, 5])
  func jobsAgree(jobs: Int) throws {
    let (lines, _) = try Self.mixedInput()
    // Enough lines for several windows of every job count.
    let input = Data(
      (Array(repeating: lines, count: 80).flatMap { $0 }.joined(separator: "\n") + "\n").utf8)
    let (oneStatus, one) = run(["batch", "--jobs", "1", "--target", "ios13+"], input: input)
    let (status, many) = run(
      ["batch", "--jobs", String(jobs), "--target", "ios13+"], input: input)
    #expect(oneStatus == .failure)
    #expect(status == oneStatus)
    #expect(many.standardOutput == one.standardOutput)
    #expect(text(one.standardOutput).split(separator: "\n").count == 80 * lines.count)
  }

  @Test(
    "Input arriving a few bytes at a time gives the same output as input read whole",
    arguments: [1, 2, 7, 4096])
  func smallReads(partSize: Int) throws {
    let (lines, _) = try Self.mixedInput()
    let input = Data((lines + lines).joined(separator: "\r\n").utf8)
    let (_, whole) = run(["batch", "--jobs", "2"], input: input)
    let offset = Mutex(0)
    let captured = Captured()
    let base = captured.streams()
    let streams = Streams(
      readStandardInput: { input },
      readStandardInputPart: { buffer in
        offset.withLock { offset in
          let count = min(partSize, buffer.count, input.count - offset)
          input.copyBytes(
            to: buffer.bindMemory(to: UInt8.self), from: offset..<(offset + count))
          offset += count
          return count
        }
      }, writeStandardOutput: base.writeStandardOutput,
      writeStandardError: base.writeStandardError, standardOutputIsTerminal: false)
    _ = ResumeDataTool.run(["batch", "--jobs", "2"], streams: streams)
    #expect(captured.standardOutput == whole.standardOutput)
    #expect(try resultObjects(whole.standardOutput).count == 2 * lines.count)
  }

  @Test(
    "A repaired or converted blob is the one repair or convert writes",
    arguments: [
      (["--target", "ios11.0-11.2"], ["repair", "--target", "ios11.0-11.2"]),
      (["--target", "ios13+"], ["repair", "--target", "ios13+"]),
      (["--to", "v2", "--format", "binary"], ["convert", "--to", "v2", "--format", "binary"]),
      (
        ["--to", "keyed", "--info-version", "4"],
        ["convert", "--to", "keyed", "--info-version", "4"]
      ),
    ])
  func sameBlob(batch: [String], single: [String]) throws {
    for entry in resumeFixtureGenerations where entry.generation != .networkFramework {
      let blob = try resumeFixture(entry.file)
      let (_, captured) = run(["batch"] + batch, input: Data(blobRecord("1", blob).utf8))
      let result = try #require(try resultObjects(captured.standardOutput).first)
      let (status, direct) = run(
        [single[0], resumeFixturePath(entry.file), "-o", "-"] + single.dropFirst())
      guard status == .success else {
        #expect(result["ok"] as? Bool == false, "\(entry.file)")
        continue
      }
      let output = try #require(result["output"] as? [String: Any], "\(entry.file)")
      let encoded = try #require(output["blob"] as? String)
      #expect(Data(base64Encoded: encoded) == direct.standardOutput, "\(entry.file)")
      let made = try ResumeData(decoding: direct.standardOutput)
      #expect(output["generation"] as? String == made.generation.rawValue)
      #expect(result["resumable"] as? Bool == !made.findings().contains { $0.severity == .error })
    }
  }

  @Test("The empty iOS 12.0–12.2 blob is refused with its findings, and nothing is made")
  func refused() throws {
    let (status, captured) = run(
      ["batch", "--target", "ios13+"], input: Data(blobRecord("\"e\"", try emptyKeyedBlob()).utf8))
    #expect(status == .failure)
    let result = try #require(try resultObjects(captured.standardOutput).first)
    #expect(result["ok"] as? Bool == false)
    #expect(result["resumable"] as? Bool == false)
    #expect(result["output"] is NSNull)
    let error = result["error"] as? [String: Any]
    #expect(error?["kind"] as? String == "refused")
    #expect(error?["message"] as? String == "the blob cannot be resumed on ios13+: start over")
    let codes = (result["findings"] as? [[String: Any]])?.compactMap { $0["code"] as? String }
    #expect(codes == ["refuse-empty-blob"])
  }

  @Test("CRLF line breaks, a last line without a break, and ids of any JSON type")
  func lineEndings() throws {
    let blob = try resumeFixture("v2.xml.plist")
    let input =
      blobRecord("{ \"a\" :\t[1, 2.5e-3,true ,null] }", blob) + "\r\n"
      + blobRecord("12345678901234567890", blob) + "\r\n" + blobRecord("\"\\u00e9\\n\"", blob)
    let (status, captured) = run(["batch"], input: Data(input.utf8))
    #expect(status == .success)
    let ids = text(captured.standardOutput).split(separator: "\n").map {
      $0.split(separator: ",\"ok\"")[0].split(separator: "\"id\":", maxSplits: 1)[1]
    }
    #expect(ids == ["{\"a\":[1,2.5e-3,true,null]}", "12345678901234567890", "\"\\u00e9\\n\""])
  }

  @Test("An id JSON allows but a Double cannot hold is echoed as written (found by FuzzBatch)")
  func hugeNumber() throws {
    let id = "1e" + String(repeating: "5", count: 75)
    let (_, captured) = run(["batch"], input: Data("{\"id\":\(id),\"blob\":\"\"}\n".utf8))
    #expect(
      text(captured.standardOutput)
        == invalidRecordLine(1, id: id, kind: "malformed", location: "@0", "input is empty") + "\n")
  }

  @Test("A line longer than --max-record-bytes gets a too-long result and the stream goes on")
  func tooLong() throws {
    let blob = try resumeFixture("v2.xml.plist")
    let long = "{\"id\":1,\"blob\":\"" + String(repeating: "A", count: 3 << 20) + "\"}"
    let input = [blobRecord("0", blob), long, blobRecord("2", blob)].joined(separator: "\n")
    let (status, captured) = run(
      ["batch", "--max-record-bytes", "1048576"], input: Data(input.utf8))
    #expect(status == .failure)
    let results = try resultObjects(captured.standardOutput)
    #expect(results.map { $0["ok"] as? Bool } == [true, false, true])
    #expect(
      (results[1]["error"] as? [String: Any])?["message"] as? String
        == "the line is \(long.utf8.count) bytes, longer than --max-record-bytes 1048576")
  }

  @Test("A line over the limit is refused even when it arrives whole in one read")
  func tooLongInOneRead() throws {
    // Read with its line break in one part, such a line used to be let through.
    let line = "{\"id\":1,\"blob\":\"" + String(repeating: "A", count: 200) + "\"}"
    let (status, captured) = run(
      ["batch", "--max-record-bytes", "100"], input: Data((line + "\r\n").utf8))
    #expect(status == .failure)
    let results = try resultObjects(captured.standardOutput)
    #expect(results.map { $0["ok"] as? Bool } == [false])
    #expect(
      (results[0]["error"] as? [String: Any])?["message"] as? String
        == "the line is \(line.utf8.count) bytes, longer than --max-record-bytes 100")
  }

  @Test("--in-place replaces changed files atomically, keeps .bak copies, skips unchanged ones")
  func inPlace() throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let byteRange = try resumeFixture("v4-byte-range.xml.plist")
    let changed = try scratch.write(byteRange, to: "a.plist")
    chmod(changed, 0o640)
    let unchanged = try scratch.write(try resumeFixture("v2.xml.plist"), to: "b.plist")
    let guarded = try scratch.write(byteRange, to: "c.plist")
    _ = try scratch.write(Data("keep".utf8), to: "c.plist.bak")
    let input = [changed, unchanged, guarded].map { "{\"path\":\"\($0)\"}" }
    let (status, captured) = run(
      ["batch", "--target", "ios11.0-11.2", "--in-place", "--backup"],
      input: Data(input.joined(separator: "\n").utf8))
    #expect(status == .failure)
    let results = try resultObjects(captured.standardOutput)
    #expect(results.map { $0["ok"] as? Bool } == [true, true, false])
    let outputs = results.map { $0["output"] as? [String: Any] }
    #expect(outputs[0]?["written"] as? String == changed)
    #expect(outputs[1]?["written"] is NSNull)
    #expect(
      (results[2]["error"] as? [String: Any])?["message"] as? String
        == "\(guarded).bak already exists; not replacing it")
    let (_, direct) = run(
      [
        "repair", resumeFixturePath("v4-byte-range.xml.plist"), "--target", "ios11.0-11.2", "-o",
        "-",
      ])
    #expect(try Data(contentsOf: URL(fileURLWithPath: changed)) == direct.standardOutput)
    #expect(try Data(contentsOf: URL(fileURLWithPath: changed + ".bak")) == byteRange)
    #expect(try Data(contentsOf: URL(fileURLWithPath: guarded)) == byteRange)
    #expect(try Data(contentsOf: URL(fileURLWithPath: guarded + ".bak")) == Data("keep".utf8))
    #expect(!FileManager.default.fileExists(atPath: unchanged + ".bak"))
    let mode = try FileManager.default.attributesOfItem(atPath: changed)[.posixPermissions]
    #expect(mode as? Int == 0o640)
    let left = try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).sorted()
    #expect(left == ["a.plist", "a.plist.bak", "b.plist", "c.plist", "c.plist.bak"])
  }

  @Test(
    "Usage errors exit 64 before any input is read",
    arguments: [
      (["--target", "ios13+", "--to", "v2"], "give --target or --to, not both"),
      (["--backup"], "--backup goes with --in-place"),
      (["--in-place"], "--in-place needs --target or --to: there is nothing to write"),
      (["--jobs", "0"], "--jobs must be a whole number from 1 to 256"),
      (["--format", "xml"], "--format and --info-version go with --to"),
      (
        ["--to", "v3"],
        "--to must be one of v1, v2, v4, keyed, network-framework, network-framework-webkit, safari, not 'v3'"
      ),
      (
        ["--max-record-bytes", "x"],
        "--max-record-bytes must be a whole number from 1 to 1073741824"
      ),
    ])
  func usage(arguments: [String], message: String) {
    let (status, captured) = run(["batch"] + arguments, input: Data("garbage\n".utf8))
    #expect(status == .usage)
    #expect(captured.standardOutput.isEmpty)
    #expect(
      captured.standardError
        == "Error: \(message)\nRun 'resumedata batch --help' for usage.\n")
  }

  @Test("A path record naming a FIFO or a device fails instead of blocking the stream")
  func specialFiles() throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let fifo = scratch.path("fifo")
    #expect(mkfifo(fifo, 0o600) == 0)
    let input = [
      "{\"path\":\"\(fifo)\"}", "{\"path\":\"/dev/zero\"}", "{\"path\":\"\(scratch.url.path)\"}",
    ]
    let (status, captured) = run(["batch"], input: Data(input.joined(separator: "\n").utf8))
    #expect(status == .failure)
    let errors = try resultObjects(captured.standardOutput).map {
      ($0["error"] as? [String: Any])?["message"] as? String
    }
    #expect(errors == ["not a regular file", "not a regular file", "is a directory"])
  }

  @Test("--exit-zero: failed records are only in the output")
  func exitZero() throws {
    let input = Data("garbage\n".utf8)
    let (status, captured) = run(["batch", "--exit-zero"], input: input)
    #expect(status == .success)
    #expect(try resultObjects(captured.standardOutput).map { $0["ok"] as? Bool } == [false])
    let (missing, _) = run(["batch", "--exit-zero", "/nonexistent/in.ndjson"])
    #expect(missing == .unreadableInput)
  }

  @Test("An unreadable input file exits 66; the other files are still processed")
  func unreadableInput() throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let good = try scratch.write(
      Data((blobRecord("1", try resumeFixture("v2.xml.plist")) + "\n").utf8), to: "in.ndjson")
    let missing = scratch.path("missing.ndjson")
    let (status, captured) = run(["batch", missing, good])
    #expect(status == .unreadableInput)
    #expect(captured.standardError == "Error: \(missing): cannot open: No such file or directory\n")
    let results = try resultObjects(captured.standardOutput)
    #expect(results.map { $0["input"] as? String } == [good])
    #expect(results.map { $0["ok"] as? Bool } == [true])
  }
}

/// `batch` composed with the engines people run it under, on the built executable.
@Suite("resumedata batch in pipelines")
struct BatchPipelineTests {
  /// A result line without its position (`input` and `line`), which depends on how the input
  /// was cut up; everything else must not.
  static func withoutPosition(_ line: Substring) -> String {
    let text = String(line)
    guard let start = text.range(of: ",\"input\":"), let end = text.range(of: ",\"id\":") else {
      return text
    }
    return String(text[..<start.lowerBound]) + String(text[end.lowerBound...])
  }

  @Test("split + xargs -P, standing in for an external engine, gives the one-process output")
  func xargs() throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let (lines, _) = try BatchCommandTests.mixedInput()
    let all = Array(repeating: lines, count: 40).flatMap { $0 }
    _ = try scratch.write(Data((all.joined(separator: "\n") + "\n").utf8), to: "in.ndjson")
    let script = """
      set -e
      cd '\(scratch.url.path)'
      '\(executable.path)' batch --target ios13+ < in.ndjson > one.ndjson || [ $? -eq 1 ]
      split -l 97 -d -a 4 in.ndjson part.
      ls part.* | xargs -P 2 -I{} sh -c '"$0" batch --jobs 1 --target ios13+ < {} > {}.out; [ $? -le 1 ]' '\(executable.path)'
      cat $(ls part.*.out | sort) > many.ndjson
      """
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", script]
    try process.run()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
    let one = try String(contentsOfFile: scratch.path("one.ndjson"), encoding: .utf8)
    let many = try String(contentsOfFile: scratch.path("many.ndjson"), encoding: .utf8)
    let oneLines = one.split(separator: "\n")
    #expect(oneLines.count == all.count)
    #expect(
      oneLines.map(Self.withoutPosition) == many.split(separator: "\n").map(Self.withoutPosition))
  }

  @Test(
    "A 1,000,000-line input streams through the executable, each line answered exactly, in order")
  func millionLines() throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let count = 1_000_000
    var input = [UInt8]()
    input.reserveCapacity(count * 16)
    for index in 0..<count { input += Array("{\"id\":\(index)}\n".utf8) }
    let path = try scratch.write(Data(input), to: "in.ndjson")
    // Output to a file, not a pipe: the test reads it once the run is over.
    let outputPath = scratch.path("out.ndjson")
    _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
    let outputHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
    let process = Process()
    process.executableURL = executable
    process.arguments = ["batch", path, "--jobs", "2"]
    process.standardOutput = outputHandle
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    try outputHandle.close()
    #expect(process.terminationStatus == 1)
    let output = try Data(contentsOf: URL(fileURLWithPath: outputPath))
    let head = "{\"schemaVersion\":1,\"input\":\"\(path)\",\"line\":"
    let tail =
      ",\"ok\":false,\"generation\":null,\"container\":null,\"resumable\":null,"
      + "\"findings\":[],\"output\":null,\"error\":{\"kind\":\"invalid-record\",\"file\":null,"
      + "\"location\":\"column 1\",\"message\":\"a record needs a \\\"blob\\\", a \\\"text\\\" or a \\\"path\\\"\"}}"
    var lines = 0
    var exact = 0
    for line in output.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
      .dropLast()
    {
      if line.elementsEqual("\(head)\(lines + 1),\"id\":\(lines)\(tail)".utf8) { exact += 1 }
      lines += 1
    }
    #expect(lines == count)
    #expect(exact == count)
  }

}

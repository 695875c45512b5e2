import Foundation
import ResumeData
import ResumeDataBatch
import TestSupport
import Testing

/// A record of `blob` (base64) with the id `id`, as one line of NDJSON without its line break.
func record(_ id: Int, _ blob: Data) -> Data {
  Data("{\"id\":\(id),\"blob\":\"\(blob.base64EncodedString())\"}".utf8)
}

/// The text of a result.
func text(_ result: BatchResult) -> String { String(decoding: result.json, as: UTF8.self) }

/// The result line of a record that failed before its blob was decoded.
func failedLine(
  _ line: Int, id: String, input: String = "records", kind: String, location: String,
  _ message: String
) -> String {
  "{\"schemaVersion\":1,\"input\":\"\(input)\",\"line\":\(line),\"id\":\(id),\"ok\":false,"
    + "\"generation\":null,\"container\":null,\"resumable\":null,\"findings\":[],"
    + "\"output\":null,\"error\":{\"kind\":\"\(kind)\",\"file\":null,\"location\":\(location),"
    + "\"message\":\"\(message)\"}}"
}

@Suite("Batch pipeline, in-process")
struct InProcessPipelineTests {
  static let fixtures = [
    "v1.xml.plist", "v2.xml.plist", "v2.binary.plist", "v4-byte-range.xml.plist",
    "keyed-v5-response.archive", "network-framework.blob", "safari.archive",
  ]

  /// Every fixture as a record, then a line that is not a record, in turn; and a truncated blob.
  static func mixedRecords() throws -> [Data] {
    var records: [Data] = []
    for (index, name) in fixtures.enumerated() {
      records.append(record(index, try fixture("resume/" + name)))
      records.append(Data("{\"id\":\(index),\"blob\":\"QU=D\"}".utf8))
    }
    records.append(record(99, try fixture("resume/v2.binary.plist").prefix(1_000)))
    return records
  }

  static let operations: [BatchOptions.Operation] = [
    .diagnose, .repair(.ios13Later), .repair(.ios10Early),
    .convert(.keyed, format: nil, infoVersion: nil), .convert(.v2, format: .xml, infoVersion: nil),
  ]

  @Test("Records in a sequence get the results the same lines get as NDJSON", arguments: operations)
  func sequenceMatchesStream(operation: BatchOptions.Operation) throws {
    let records = try Self.mixedRecords()
    let options = BatchOptions(operation: operation)
    var joined = Data()
    for record in records { joined += record + Data("\n".utf8) }
    var offset = 0
    var streamed = Data()
    let streamOk = try BatchPipeline(options: options, inputName: "records", jobs: 2).run(
      readingWith: { buffer in
        let count = min(buffer.count, joined.count - offset)
        joined.copyBytes(
          to: buffer.bindMemory(to: UInt8.self).baseAddress!, from: offset..<(offset + count))
        offset += count
        return count
      },
      write: { streamed += $0 })
    #expect(!streamOk)
    for jobs in [1, 3] {
      let pipeline = BatchPipeline(options: options, inputName: "records", jobs: jobs)
      let results = pipeline.results(of: records)
      #expect(results.map(\.line) == Array(1...records.count))
      #expect(results.reduce(Data()) { $0 + $1.json + Data("\n".utf8) } == streamed)
      // Each fixture is ok, each line between them is not, nor is the truncated blob.
      #expect(results.map(\.ok) == (0..<records.count).map { $0 % 2 == 0 && $0 < 14 })
      #expect(
        results.map(\.json)
          == records.indices.map { pipeline.process(records[$0], line: $0 + 1).json })
    }
  }

  @Test(
    "A record that fails gets its exact result line",
    arguments: [
      (
        "{\"id\":7,\"blob\":\"QU=D\"}",
        failedLine(
          3, id: "7", kind: "invalid-record", location: "\"column 19\"",
          "\\\"blob\\\" is not valid base64: '=' before the end")
      ),
      (
        "{\"id\":[1, 2]}",
        failedLine(
          3, id: "[1,2]", kind: "invalid-record", location: "\"column 1\"",
          "a record needs a \\\"blob\\\", a \\\"text\\\" or a \\\"path\\\"")
      ),
      (
        "{\"id\":\"x\",\"blob\":\"AAAA\"}",
        failedLine(
          3, id: "\"x\"", kind: "malformed", location: "\"@0\"",
          "input is neither an XML nor a binary property list")
      ),
      (
        String(repeating: " ", count: 40),
        failedLine(
          3, id: "null", kind: "too-long", location: "null",
          "the line is 40 bytes, longer than --max-record-bytes 32")
      ),
    ])
  func failedRecord(line: String, expected: String) {
    let pipeline = BatchPipeline(
      options: BatchOptions(operation: .repair(.ios13Later), maximumRecordBytes: 32),
      inputName: "records", jobs: 1)
    let result = pipeline.process(Data(line.utf8), line: 3)
    #expect(result.line == 3)
    #expect(result.ok == false)
    #expect(text(result) == expected)
  }

  @Test(
    "An untouched blob comes out as the base64 it came in as",
    arguments: ["v2.xml.plist", "keyed-v5-response.archive", "v2.binary.plist"])
  func untouched(name: String) throws {
    let blob = try fixture("resume/" + name)
    let resume = try ResumeData(decoding: blob)
    let pipeline = BatchPipeline(
      options: BatchOptions(operation: .repair(.ios13Later)), inputName: "mem", jobs: 1)
    let result = pipeline.process(record(1, blob), line: 1)
    #expect(result.ok)
    let json = text(result)
    #expect(
      json.hasPrefix(
        "{\"schemaVersion\":1,\"input\":\"mem\",\"line\":1,\"id\":1,\"ok\":true,\"generation\":"
          + "\"\(resume.generation.rawValue)\",\"container\":\"\(resume.container.rawValue)\","
          + "\"resumable\":true,\"findings\":[],\"output\":{"))
    #expect(json.contains("\"blob\":\"\(blob.base64EncodedString())\",\"written\":null},"))
    #expect(json.hasSuffix("\"error\":null}"))
  }

  @Test("Results are handed over in order, one per record, across many windows")
  func manyWindows() throws {
    let good = record(0, try fixture("resume/keyed-v5-response.archive"))
    let bad = Data("{\"id\":0}".utf8)
    // Every seventh record fails: more than three windows of 2 jobs (512 lines each).
    let records = (0..<2_000).map { $0 % 7 == 3 ? bad : good }
    var lines: [Int] = []
    var failed: [Int] = []
    let allOk = BatchPipeline(options: BatchOptions(), jobs: 2).forEachResult(of: records) {
      lines.append($0.line)
      if !$0.ok { failed.append($0.line) }
    }
    #expect(!allOk)
    #expect(lines == Array(1...2_000))
    #expect(failed == (0..<2_000).filter { $0 % 7 == 3 }.map { $0 + 1 })
    #expect(
      BatchPipeline(options: BatchOptions(), jobs: 2).forEachResult(of: [good, good]) { _ in })
    #expect(BatchPipeline(options: BatchOptions(), jobs: 2).results(of: [Data]()) == [])
  }

  @Test("A file that cannot be opened, or is a directory, is an input error naming it")
  func unopenable() throws {
    let pipeline = BatchPipeline(options: BatchOptions(), jobs: 1)
    let missing = repositoryRoot.appendingPathComponent("no-such-file.ndjson").path
    var written = 0
    #expect(throws: BatchInputError("cannot open: No such file or directory", file: missing)) {
      try pipeline.run(contentsOf: missing) { written += $0.count }
    }
    let directory = repositoryRoot.appendingPathComponent("Fixtures").path
    #expect(throws: BatchInputError("is a directory", file: directory)) {
      try pipeline.run(contentsOf: directory) { written += $0.count }
    }
    #expect(written == 0)
  }

  @Test("A read that fails after some lines: their results are written, then the error")
  func readFailure() throws {
    struct Broken: Error, LocalizedError {
      var errorDescription: String? { "the pipe broke" }
    }
    let lines = Data("{\"id\":1}\n{\"id\":2}\n{\"id\":3}".utf8)
    var calls = 0
    var written = Data()
    let pipeline = BatchPipeline(options: BatchOptions(), inputName: "-", jobs: 2)
    #expect(throws: BatchInputError("cannot read: the pipe broke", file: "-")) {
      try pipeline.run(
        readingWith: { buffer in
          calls += 1
          guard calls == 1 else { throw Broken() }
          lines.copyBytes(to: buffer.bindMemory(to: UInt8.self).baseAddress!, count: lines.count)
          return lines.count
        },
        write: { written += $0 })
    }
    // The two lines ended by a line break are answered; the third, whose end the failed read
    // would have shown, is not a line yet.
    let message = "a record needs a \\\"blob\\\", a \\\"text\\\" or a \\\"path\\\""
    #expect(
      String(decoding: written, as: UTF8.self)
        == (1...2).map {
          failedLine(
            $0, id: String($0), input: "-", kind: "invalid-record", location: "\"column 1\"",
            message) + "\n"
        }.joined())
  }

  @Test(
    "Jobs and the record limit are kept in range",
    arguments: [
      (0, 0, 1, 1), (1, 1, 1, 1), (3, 100, 3, 100), (256, 1 << 30, 256, 1 << 30),
      (1_000, (1 << 30) + 1, 256, 1 << 30), (-5, -1, 1, 1),
    ])
  func clamped(jobs: Int, limit: Int, expectedJobs: Int, expectedLimit: Int) {
    let pipeline = BatchPipeline(
      options: BatchOptions(maximumRecordBytes: limit), jobs: jobs)
    #expect(pipeline.jobs == expectedJobs)
    #expect(pipeline.options.maximumRecordBytes == expectedLimit)
    #expect(BatchPipeline(options: BatchOptions()).jobs >= 1)
    #expect(BatchOptions().maximumRecordBytes == 64 << 20)
  }
}

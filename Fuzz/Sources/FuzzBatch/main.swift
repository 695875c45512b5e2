import Foundation
import FuzzCommon
@_spi(Differential) import KeyedArchive
@_spi(Differential) import PropertyList
import ResumeDataCLI

/// The check the batch target runs on every input: `resumedata batch`, in-process, reads the bytes
/// as NDJSON and must answer each line with exactly one JSON result, in order, and exit 0 or 1.
/// The first byte picks what is done to each blob (diagnose, repair, convert); the records' blobs
/// go through the whole resume-data layer. Path records read files (never write: no --in-place).
enum BatchHarness {
  static let modes: [[String]] = [
    [], ["--target", "ios13+"], ["--to", "v2"], ["--target", "ios10.0-10.1"],
  ]

  static func run(_ input: UnsafeRawBufferPointer) -> CInt {
    guard let first = input.first else { return 0 }
    let lines = Data(UnsafeRawBufferPointer(rebasing: input.dropFirst()))
    let output = OutputBox()
    let streams = Streams(
      readStandardInput: { lines }, writeStandardOutput: { output.append($0) },
      writeStandardError: { output.appendError($0) }, standardOutputIsTerminal: false)
    let arguments =
      ["batch", "--jobs", "1", "--max-record-bytes", "1048576"]
      + modes[Int(first) % modes.count]
    let status = ResumeDataTool.run(arguments, streams: streams)
    guard status == .success || status == .failure else {
      fatalError("batch exited \(status): \(output.errorText)")
    }
    // One result a line: a last line without a line break counts, an ending line break does not.
    var expected = lines.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
    if let last = lines.last, last != UInt8(ascii: "\n") { expected += 1 }
    let results = output.lines
    guard results.count == expected else {
      fatalError("\(expected) lines in, \(results.count) results out")
    }
    // Checked by its fixed start rather than by JSONSerialization, which refuses numbers JSON allows
    // (an id of 1e5555 is valid JSON, echoed as written, but overflows a Double).
    for (index, result) in results.enumerated() {
      let start = "{\"schemaVersion\":1,\"input\":\"-\",\"line\":\(index + 1),\"id\":"
      guard result.starts(with: Data(start.utf8)), result.last == UInt8(ascii: "}") else {
        fatalError("result \(index + 1) is not the JSON result of line \(index + 1)")
      }
    }
    return 0
  }
}

/// What the in-process run wrote.
final class OutputBox: @unchecked Sendable {
  private let lock = NSLock()
  private var data = Data()
  private var error = Data()

  func append(_ bytes: Data) { lock.withLock { data.append(bytes) } }
  func appendError(_ bytes: Data) { lock.withLock { error.append(bytes) } }

  var lines: [Data] {
    lock.withLock {
      data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).dropLast()
    }
  }
  var errorText: String { lock.withLock { String(decoding: error, as: UTF8.self) } }
}

/// libFuzzer's entry point: runs `batch` in-process on the input as NDJSON.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBatch(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  // Every view made from what a writer knows of its bytes is checked against the checked view,
  // and every archive shared by objects that unfold alike against the one written apart.
  BinaryViewDifferential.checksWrittenViews = true
  SubArchiveDifferential.checksAlikeWrites = true
  return BatchHarness.run(UnsafeRawBufferPointer(start: data, count: size))
}

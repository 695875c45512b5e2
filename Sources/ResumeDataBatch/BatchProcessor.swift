import PortableFoundation
@_spi(Writing) import PropertyList
import ResumeData

/// What `batch` does with one line: read the record, get its blob, diagnose, repair or convert it,
/// and say so in one line of JSON. Never throws: every failure is a result of its own.
struct BatchProcessor: Sendable {
  /// One line of the input, as the processor sees it.
  enum Line {
    /// The line's bytes, without its line break.
    case text(UnsafeBufferPointer<UInt8>)
    /// A line longer than the limit, skipped without being held: its length in bytes.
    case tooLong(Int)
  }

  let settings: BatchOptions
  /// The NDJSON input's name (`-` for standard input), echoed in every result.
  let input: String

  /// Processes the line numbered `number` (from 1) of the input and appends its result to
  /// `output`: one line of JSON and its line break.
  ///
  /// - Returns: whether the record was ok (counts toward the exit status).
  func process(_ line: Line, line number: Int, into output: inout JSONLine) -> Bool {
    let finished = outcome(line, line: number)
    finished.render(into: &output)
    return finished.error == nil
  }

  private func outcome(_ line: Line, line number: Int) -> BatchResultObject.Finished {
    var result = BatchResultObject(input: input, line: number)
    switch line {
    case .tooLong(let length):
      return result.failed(
        "too-long",
        "the line is \(length) bytes, longer than --max-record-bytes "
          + "\(settings.maximumRecordBytes)")
    case .text(let bytes):
      let parsed = Swift.Result { () throws(BatchRecord.Failure) in
        try BatchRecord(line: bytes)
      }
      switch parsed {
      case .failure(let failure):
        result.id = failure.id
        return result.failed(
          "invalid-record", failure.message, location: "column \(failure.column)")
      case .success(let record):
        result.id = record.id
        return process(record, line: bytes, result: result)
      }
    }
  }

  private func process(
    _ record: BatchRecord, line: UnsafeBufferPointer<UInt8>, result: consuming BatchResultObject
  ) -> BatchResultObject.Finished {
    // A blob read out of the line is looked at where it was decoded, before any `Data` is made.
    if case .decoded(let decoded, _) = record.source, let healthy = healthyKeyed(decoded.bytes) {
      return untouched(
        Untouched(healthy), blob: nil, record: record, line: line, result: result)
    }
    let blob: Data
    let file: String
    switch record.source {
    case .base64(let text, let column):
      switch Base64Groups.decode(text) {
      case .success(let decoded): blob = decoded
      case .failure(let error):
        // The column in the line when the string has no escapes; else the character in it.
        return result.failed(
          "invalid-record", "\"blob\" is not valid base64: \(error.message)",
          location: column.map { "column \($0 + error.offset)" }
            ?? "blob character \(error.offset + 1)")
      }
      file = "blob"
    case .decoded(let decoded, _):
      blob = decoded.data
      file = "blob"
    case .text(let text):
      do {
        blob = try CapturedBlob.read(text).bytes
      } catch {
        return result.failed(OperationFailure(error), file: "blob")
      }
      file = "blob"
    case .path(let path):
      // Only regular files: a FIFO or a device named by a record could block the stream forever.
      do throws(FileAccessError) {
        blob = try FileAccess.read(
          path, limit: settings.maximumRecordBytes, regularFileOnly: true)
      } catch {
        return result.failed("unreadable", error.message, file: path)
      }
      file = path
    }
    if case .decoded = record.source {
      // Looked at above.
    } else if let healthy = blob.withUnsafeBytes({ healthyKeyed($0) }) {
      return untouched(
        Untouched(healthy), blob: blob, record: record, line: line, result: result)
    }
    let resume: ResumeData
    do {
      switch try reading(blob) {
      case .healthy(let healthy):
        let echoed: Data? = if case .decoded = record.source { nil } else { blob }
        return untouched(
          Untouched(healthy), blob: echoed, record: record, line: line, result: result)
      case .decoded(let decoded):
        resume = decoded
      }
    } catch {
      return result.failed(OperationFailure(error), file: file)
    }
    result.describe(resume)
    let made: ResumeData
    do {
      switch settings.operation {
      case .diagnose:
        let findings = resume.findings(temporaryDirectory: settings.temporaryDirectory)
        result.findings = findings
        result.resumable = !findings.contains { $0.severity == .error }
        return result.succeeded()
      case .repair(let target):
        var repair = try (consume resume).repaired(
          for: target, temporaryDirectory: settings.temporaryDirectory)
        result.findings = repair.findings
        // Taken out, not copied: a copy retains every reference the blob holds.
        guard let blob = repair.blob.take() else {
          result.resumable = false
          return result.failed(
            "refused", "the blob cannot be resumed on \(target.rawValue): start over")
        }
        made = blob
      case .convert(let generation, let format, let infoVersion):
        let conversion = try resume.converted(
          to: generation, format: format, infoVersion: infoVersion,
          temporaryDirectory: settings.temporaryDirectory)
        result.findings = conversion.findings
        made = conversion.blob
      }
    } catch {
      return result.failed(OperationFailure(error), file: file)
    }
    let bytes: Data
    do {
      bytes = try made.encoded(keepingUntouchedBytes: true)
    } catch {
      return result.failed(OperationFailure(error), file: file)
    }
    let findings = made.findings(temporaryDirectory: settings.temporaryDirectory)
    result.resumable = !findings.contains { $0.severity == .error }
    let output = BatchResultObject.Output(
      generation: made.generation.rawValue, container: made.container.rawValue,
      infoVersion: made.infoVersion, findings: findings)
    return written(
      output, bytes: bytes, untouched: bytes == blob, record: record, line: line, result: result)
  }

  /// The target the one pass answers for: `.some(nil)` to diagnose, the repair's target, or nil
  /// for an operation it does not answer for (a conversion, or a temporary directory to look in)
  /// and when the options turn the one pass off.
  private var onePassTarget: RepairTarget?? {
    guard settings.temporaryDirectory == nil, settings.answersHealthyBlobsInOnePass else {
      return nil
    }
    switch settings.operation {
    case .diagnose: return .some(nil)
    case .repair(let target): return target
    case .convert: return nil
    }
  }

  /// The operation's result when `ResumeData.healthyKeyedBlob` recognizes the blob (so that it is
  /// not decoded), when the one pass answers for the operation.
  private func healthyKeyed(_ blob: UnsafeRawBufferPointer) -> HealthyKeyedBlob? {
    guard let target = onePassTarget else { return nil }
    return ResumeData.healthyKeyedBlob(bytes: blob, for: target)
  }

  /// The blob read by `ResumeData.reading` (a healthy plain blob answered without its requests
  /// decoded) when the one pass answers for the operation, else decoded.
  private func reading(_ blob: Data) throws -> ResumeDataReading {
    guard let target = onePassTarget else { return .decoded(try ResumeData(decoding: blob)) }
    return try ResumeData.reading(blob, for: target)
  }

  /// What the one pass reports of a healthy blob.
  private struct Untouched {
    var generation: ResumeDataGeneration
    var container: ResumeDataContainer
    var infoVersion: Int?
    /// `findings()`, for no target and for the repair's: none of them an error.
    var findings: [Finding]

    init(_ healthy: HealthyKeyedBlob) {
      (generation, container) = (.keyed, .keyedArchive)
      (infoVersion, findings) = (healthy.infoVersion, [])
    }

    init(_ healthy: HealthyPlainBlob) {
      (generation, container) = (healthy.generation, healthy.container)
      (infoVersion, findings) = (healthy.infoVersion, healthy.findings)
    }
  }

  /// The result of a healthy blob: what decoding, diagnosing and repairing it would report (its
  /// findings, none of them an error; repaired, its own bytes, with no repair finding). `blob` is
  /// nil for a blob read out of the line, whose text is then echoed.
  private func untouched(
    _ healthy: Untouched, blob: Data?, record: BatchRecord,
    line: UnsafeBufferPointer<UInt8>, result: consuming BatchResultObject
  ) -> BatchResultObject.Finished {
    result.generation = healthy.generation.rawValue
    result.container = healthy.container.rawValue
    result.resumable = true
    guard case .repair = settings.operation else {
      result.findings = healthy.findings
      return result.succeeded()
    }
    let output = BatchResultObject.Output(
      generation: healthy.generation.rawValue, container: healthy.container.rawValue,
      infoVersion: healthy.infoVersion, findings: healthy.findings)
    return written(output, bytes: blob, untouched: true, record: record, line: line, result: result)
  }

  /// The result of a record whose blob became `bytes` (`untouched`: the record's own blob),
  /// described by `output`: written back to a "path" record's file with `--in-place`, else into
  /// the result. `bytes` is nil only for an untouched blob read out of the line.
  private func written(
    _ output: consuming BatchResultObject.Output, bytes: Data?, untouched: Bool,
    record: BatchRecord, line: UnsafeBufferPointer<UInt8>, result: consuming BatchResultObject
  ) -> BatchResultObject.Finished {
    var output = output
    if settings.inPlace, case .path(let path) = record.source {
      // An untouched blob is its own bytes: nothing to replace, nothing to back up.
      if !untouched, let bytes {
        do throws(FileAccessError) {
          try FileAccess.replace(path, with: bytes, backup: settings.backup)
        } catch {
          output.written = .absent
          result.output = output
          return result.failed("failed", error.message, file: path)
        }
        output.written = .path(path)
      }
    } else if case .decoded(_, let text) = record.source, untouched {
      // The blob comes out as it came in (a healthy one, typically), and its text in the line is
      // canonical base64: that text is its base64.
      output.blob = .base64(UnsafeBufferPointer(rebasing: line[text]))
    } else if let bytes {
      output.blob = .bytes(bytes)
    }
    result.output = output
    return result.succeeded()
  }
}

/// The fields of one result line, written in a fixed order once the record is done.
private struct BatchResultObject {
  let input: String
  let line: Int
  var id: String?
  var generation: String?
  var container: String?
  var resumable: Bool?
  var findings: [Finding] = []
  var output: Output?

  /// The `output` object: the blob made from the record.
  struct Output {
    var generation: String
    var container: String
    var infoVersion: Int?
    var findings: [Finding]
    /// The new blob; nil writes `null` (it went to a file, or nowhere).
    var blob: Blob? = nil
    var written = Written.none
  }

  /// The `blob` field of `output`.
  enum Blob {
    /// Bytes, written as base64.
    case bytes(Data)
    /// Base64 text already: part of the record's line, which outlives the result's rendering.
    case base64(UnsafeBufferPointer<UInt8>)
  }

  /// The `written` field of `output`.
  enum Written {
    /// Left out: the replacement failed (the error says why).
    case absent
    /// `null`: the blob is in `blob`, or the file already held it.
    case none
    /// The file replaced.
    case path(String)
  }

  /// A record done with: its fields, and what went wrong if anything did.
  struct Finished {
    var result: BatchResultObject
    var error: Failure?

    /// Appends the result's line of JSON and its line break to `json`.
    func render(into json: inout JSONLine) { result.render(error: error, into: &json) }
  }

  /// The `error` object.
  struct Failure {
    var kind: String
    var file: String?
    var location: String?
    var message: String
  }

  init(input: String, line: Int) {
    self.input = input
    self.line = line
  }

  mutating func describe(_ resume: ResumeData) {
    generation = resume.generation.rawValue
    container = resume.container.rawValue
  }

  // Consuming, as are the two below: the record is done with, and a copy of its fields would
  // retain each of their strings.
  consuming func succeeded() -> Finished { Finished(result: self, error: nil) }

  /// A failed record: `kind` names the failure, `location` (a column, an offset, a line or a key
  /// path) and `file` (a "path" record's file) say where when known.
  consuming func failed(
    _ kind: String, _ message: String, location: String? = nil, file: String? = nil
  )
    -> Finished
  {
    Finished(
      result: self, error: Failure(kind: kind, file: file, location: location, message: message))
  }

  /// A failed record from an error of decoding, changing or encoding the blob of `file` ("blob"
  /// for one in the line).
  consuming func failed(_ error: OperationFailure, file: String) -> Finished {
    let kind = error.kind == .malformed ? "malformed" : "failed"
    // Spelled out in JSON, where a bare number could be anything.
    let location: String? =
      switch error.location {
      case .none: nil
      case .line(let line): "line \(line)"
      case .lineColumn(let line, let column): "line \(line), column \(column)"
      case .offset(let offset): "@\(offset)"
      }
    // An edit's usage error names no file, as the command-line tool reports it.
    let file = error.kind == .usage || file == "blob" ? nil : file
    return failed(kind, error.message, location: location, file: file)
  }

  fileprivate func render(error: Failure?, into json: inout JSONLine) {
    // Room for the fields and the blob's base64, so that the line grows at most once or twice.
    let blobText =
      switch output?.blob {
      case .bytes(let bytes): bytes.count / 3 * 4
      case .base64(let text): text.count
      case nil: 0
      }
    json.reserve(640 + blobText)
    // The keys and the punctuation between the values in pieces of constant text.
    json.keys(#"{"schemaVersion":1,"input":"#)
    json.string(input)
    json.keys(#","line":"#)
    json.number(line)
    json.keys(#","id":"#)
    json.raw(id ?? "null")
    json.keys(error == nil ? #","ok":true,"generation":"# : #","ok":false,"generation":"#)
    json.string(generation)
    json.keys(#","container":"#)
    json.string(container)
    json.keys(#","resumable":"#)
    json.bool(resumable)
    json.keys(#","findings":"#)
    json.findings(findings)
    json.keys(#","output":"#)
    if let output {
      json.keys(#"{"generation":"#)
      json.string(output.generation)
      json.keys(#","container":"#)
      json.string(output.container)
      json.keys(#","infoVersion":"#)
      if let infoVersion = output.infoVersion { json.number(infoVersion) } else { json.null() }
      json.keys(#","findings":"#)
      json.findings(output.findings)
      json.keys(#","blob":"#)
      switch output.blob {
      case .bytes(let bytes): json.base64(bytes)
      case .base64(let text): json.base64(text: text)
      case nil: json.null()
      }
      switch output.written {
      case .absent: break
      case .none: json.field("written", string: nil)
      case .path(let path): json.field("written", string: path)
      }
      json.endObject()
    } else {
      json.null()
    }
    json.keys(#","error":"#)
    if let error {
      json.beginObject()
      json.field("kind", string: error.kind)
      json.field("file", string: error.file)
      json.field("location", string: error.location)
      json.field("message", string: error.message)
      json.endObject()
    } else {
      json.null()
    }
    json.endObject()
    json.endLine()
  }
}

/// JSON a line a value, as NDJSON needs it, written as UTF-8 bytes field by field: building it as
/// a `String` cost as much as a record's repair. One buffer holds the result lines of a run of
/// records, so that a run costs one allocation and one write.
///
/// Written through `OutputBytes`: each writer reserves its room once, then puts without checks.
struct JSONLine: ~Copyable {
  private var bytes: OutputBytes
  // A value was just completed: the next key or element needs a comma first.
  private var needsComma = false

  /// An empty text with room for `capacity` bytes.
  init(capacity: Int) { bytes = OutputBytes(capacity: capacity) }

  /// The text, in the memory it was written in.
  consuming func finish() -> Data { bytes.finish() }

  /// The text, in the block it was written in, now the caller's to give back
  /// (`ReusableBlocks.give`).
  consuming func finishInBlock() -> UnsafeMutableRawBufferPointer { bytes.finishInBlock() }

  /// The number of bytes written.
  var written: Int { bytes.written }

  mutating func beginObject() { open(UInt8(ascii: "{")) }
  mutating func endObject() { close(UInt8(ascii: "}")) }
  mutating func beginArray() { open(UInt8(ascii: "[")) }
  mutating func endArray() { close(UInt8(ascii: "]")) }

  /// An object's key (a name that needs no escaping), before its value.
  mutating func key(_ name: StaticString) {
    let length = name.utf8CodeUnitCount
    reserve(length &+ 4)
    separate()
    put(UInt8(ascii: "\""))
    put(name.utf8Start, length)
    put(UInt8(ascii: "\""))
    put(UInt8(ascii: ":"))
    needsComma = false
  }

  /// Constant JSON text that ends with a key and its colon, written as it is: what goes between
  /// two values of a result, or opens it. The text says its own commas.
  mutating func keys(_ text: StaticString) {
    reserve(text.utf8CodeUnitCount)
    put(text.utf8Start, text.utf8CodeUnitCount)
    needsComma = false
  }

  /// A key and its string value (`null` when absent).
  mutating func field(_ name: StaticString, string value: String?) {
    key(name)
    string(value)
  }

  /// A value that is JSON already.
  mutating func raw(_ json: String) {
    json.withUTF8InPlace { utf8 in
      reserve(utf8.count &+ 1)
      separate()
      put(UnsafeRawBufferPointer(utf8))
    }
    needsComma = true
  }

  /// A value that is JSON already and needs no allocation (`null`, `true`).
  private mutating func raw(_ json: StaticString) {
    reserve(json.utf8CodeUnitCount &+ 1)
    separate()
    put(json.utf8Start, json.utf8CodeUnitCount)
    needsComma = true
  }

  mutating func null() { raw("null" as StaticString) }
  mutating func number(_ value: Int) {
    // Digits straight into the line: `String(value)` allocated for each number.
    bytes.reserve(1)
    separate()
    bytes.putDecimal(negative: value < 0, magnitude: UInt64(value.magnitude))
    needsComma = true
  }

  /// `true`, `false`, or `null` when absent.
  mutating func bool(_ value: Bool?) {
    switch value {
    case true?: raw("true" as StaticString)
    case false?: raw("false" as StaticString)
    case nil: null()
    }
  }

  /// A string, quoted and escaped (RFC 8259), or `null` when absent.
  mutating func string(_ value: String?) {
    guard let value else { return null() }
    value.withUTF8InPlace { utf8 in
      reserve(utf8.count &+ 3)
      separate()
      put(UInt8(ascii: "\""))
      if !jsonNeedsEscapes(UnsafeRawBufferPointer(utf8)) {
        put(UnsafeRawBufferPointer(utf8))
      } else {
        for byte in utf8 { appendEscaped(byte) }
      }
      reserve(1)
      put(UInt8(ascii: "\""))
    }
    needsComma = true
  }

  /// Bytes as a base64 string.
  mutating func base64(_ data: Data) {
    let length = Base64Groups.encodedCount(data.count)
    reserve(length &+ 3)
    separate()
    put(UInt8(ascii: "\""))
    bytes.append(length) { out in data.withUnsafeBytes { Base64Groups.encode($0, into: out) } }
    put(UInt8(ascii: "\""))
    needsComma = true
  }

  /// Base64 text (which needs no escapes), as a string.
  mutating func base64(text: UnsafeBufferPointer<UInt8>) {
    reserve(text.count &+ 3)
    separate()
    put(UInt8(ascii: "\""))
    put(UnsafeRawBufferPointer(text))
    put(UInt8(ascii: "\""))
    needsComma = true
  }

  /// Findings as `[{"code","severity","message","path"}]`.
  mutating func findings(_ findings: [Finding]) {
    beginArray()
    for finding in findings {
      beginObject()
      field("code", string: finding.code)
      field("severity", string: finding.severity.rawValue)
      field("message", string: finding.message)
      field("path", string: finding.path)
      endObject()
    }
    endArray()
  }

  // MARK: Writing

  /// Ends a line of JSON (NDJSON's line break): what follows is the next line's first value.
  mutating func endLine() {
    reserve(1)
    put(UInt8(ascii: "\n"))
    needsComma = false
  }

  /// Makes room for `more` bytes after the text.
  mutating func reserve(_ more: Int) { bytes.reserve(more) }

  // The writers below assume the room is reserved.
  private mutating func put(_ byte: UInt8) { bytes.put(byte) }

  private mutating func put(_ pointer: UnsafeRawPointer, _ length: Int) {
    bytes.put(pointer, length)
  }

  private mutating func put(_ buffer: UnsafeRawBufferPointer) { bytes.put(buffer) }

  private mutating func separate() {
    if needsComma { put(UInt8(ascii: ",")) }
  }

  private mutating func open(_ bracket: UInt8) {
    reserve(2)
    separate()
    put(bracket)
    needsComma = false
  }

  private mutating func close(_ bracket: UInt8) {
    reserve(1)
    put(bracket)
    needsComma = true
  }

  // One UTF-8 byte of a string that needs escapes: multi-byte characters pass through whole.
  private mutating func appendEscaped(_ byte: UInt8) {
    reserve(6)
    let hex: StaticString = "0123456789abcdef"
    switch byte {
    case UInt8(ascii: "\""), UInt8(ascii: "\\"):
      put(UInt8(ascii: "\\"))
      put(byte)
    case UInt8(ascii: "\n"): escape(UInt8(ascii: "n"))
    case UInt8(ascii: "\r"): escape(UInt8(ascii: "r"))
    case UInt8(ascii: "\t"): escape(UInt8(ascii: "t"))
    case 0x08: escape(UInt8(ascii: "b"))
    case 0x0C: escape(UInt8(ascii: "f"))
    case 0..<0x20:
      put(("\\u00" as StaticString).utf8Start, 4)
      put(hex.utf8Start[Int(byte >> 4)])
      put(hex.utf8Start[Int(byte & 0xF)])
    default: put(byte)
    }
  }

  private mutating func escape(_ letter: UInt8) {
    put(UInt8(ascii: "\\"))
    put(letter)
  }
}

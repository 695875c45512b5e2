import Foundation
import PropertyList
import ResumeData

/// What `batch` does with one line: read the record, get its blob, diagnose, repair or convert it,
/// and say so in one line of JSON. Never throws: every failure is a result of its own.
struct BatchProcessor: Sendable {
  /// One line's result.
  struct Result: Sendable {
    /// The result as one line of JSON, without its line break: `json`, then `blob` (base64
    /// bytes, when the result carries a blob), then `tail`.
    var json: String
    /// The new blob's base64, when the result carries one.
    var blob: Data? = nil
    /// What follows `blob`.
    var tail = ""
    /// Whether the record was ok (counts toward the exit status).
    var ok: Bool
  }

  let settings: BatchSettings
  /// The NDJSON input's name (`-` for standard input), echoed in every result.
  let input: String

  /// Processes the line numbered `number` (from 1) of the input.
  func process(_ line: LineReader.Line, line number: Int) -> Result {
    var result = BatchResultObject(input: input, line: number)
    switch line {
    case .tooLong(let length):
      return result.failed(
        "too-long",
        "the line is \(length) bytes, longer than --max-record-bytes "
          + "\(settings.maximumRecordBytes)")
    case .text(let bytes):
      let parsed = bytes.withUnsafeBufferPointer { buffer in
        Swift.Result { () throws(BatchRecord.Failure) in try BatchRecord(line: buffer) }
      }
      switch parsed {
      case .failure(let failure):
        result.id = failure.id
        return result.failed(
          "invalid-record", failure.message, location: "column \(failure.column)")
      case .success(let record):
        result.id = record.id
        return process(record, into: &result)
      }
    }
  }

  private func process(_ record: BatchRecord, into result: inout BatchResultObject) -> Result {
    let blob: Data
    let file: String
    switch record.source {
    case .base64(let text, let column):
      switch Base64Encoding.decode(text) {
      case .success(let decoded): blob = decoded
      case .failure(let error):
        // The column in the line when the string has no escapes; else the character in it.
        return result.failed(
          "invalid-record", "\"blob\" is not valid base64: \(error.message)",
          location: column.map { "column \($0 + error.offset)" }
            ?? "blob character \(error.offset + 1)")
      }
      file = "blob"
    case .path(let path):
      // Only regular files: a FIFO or a device named by a record could block the stream forever.
      do throws(CommandError) {
        blob = try Files.read(
          path, limit: settings.maximumRecordBytes, regularFileOnly: true)
      } catch {
        return result.failed("unreadable", error.message, file: path)
      }
      file = path
    }
    let resume: ResumeData
    do throws(CommandError) {
      resume = try ResumeInput.decode(blob, file: file)
    } catch {
      return result.failed(error)
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
        let repair = try resume.repaired(
          for: target, temporaryDirectory: settings.temporaryDirectory)
        result.findings = repair.findings
        guard let blob = repair.blob else {
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
      return result.failed(CommandError.operation(error, file: file))
    }
    let bytes: Data
    do {
      bytes = try made.encoded()
    } catch {
      return result.failed(CommandError.operation(error, file: file))
    }
    let findings = made.findings(temporaryDirectory: settings.temporaryDirectory)
    result.resumable = !findings.contains { $0.severity == .error }
    var output = CompactJSON.Object()
    output.add("generation", string: made.generation.rawValue)
    output.add("container", string: made.container.rawValue)
    output.add("infoVersion", made.infoVersion.map(String.init) ?? "null")
    output.add("findings", CompactJSON.findings(findings))
    if settings.inPlace, case .path(let path) = record.source {
      output.add("blob", "null")
      if bytes == blob {
        // An untouched blob encodes to its own bytes: nothing to replace, nothing to back up.
        output.add("written", "null")
      } else {
        do throws(CommandError) {
          try Files.replace(path, with: bytes, backup: settings.backup)
        } catch {
          result.output = output.rendered
          return result.failed("failed", error.message, file: path)
        }
        output.add("written", CompactJSON.string(path))
      }
    } else {
      // The base64 goes into the output as bytes, between the text before and after it: made into
      // a String and copied into the line, it would cost more than the whole repair.
      output.add("blob", "\"")
      result.output = output.openText
      result.outputBlob = Base64Encoding.encode(bytes)
      result.outputTail = "\",\"written\":null}"
      return result.succeeded()
    }
    result.output = output.rendered
    return result.succeeded()
  }
}

/// The fields of one result line, rendered in a fixed order once the record is done.
private struct BatchResultObject {
  let input: String
  let line: Int
  var id: String?
  var generation: String?
  var container: String?
  var resumable: Bool?
  var findings: [Finding] = []
  /// The `output` object, already rendered; or, with `outputBlob`, its text up to the blob.
  var output: String?
  /// The new blob's base64, which goes between `output` and `outputTail`.
  var outputBlob: Data?
  /// The `output` object's text after `outputBlob`.
  var outputTail = ""

  init(input: String, line: Int) {
    self.input = input
    self.line = line
  }

  mutating func describe(_ resume: ResumeData) {
    generation = resume.generation.rawValue
    container = resume.container.rawValue
  }

  func succeeded() -> BatchProcessor.Result { rendered(error: nil) }

  /// A failed record: `kind` names the failure, `location` (a column, an offset, a line or a key
  /// path) and `file` (a "path" record's file) say where when known.
  func failed(_ kind: String, _ message: String, location: String? = nil, file: String? = nil)
    -> BatchProcessor.Result
  {
    var error = CompactJSON.Object()
    error.add("kind", string: kind)
    error.add("file", string: file)
    error.add("location", string: location)
    error.add("message", string: message)
    return rendered(error: error.rendered)
  }

  /// A failed record from a command error: malformed input, unreadable file or failed operation.
  func failed(_ error: CommandError) -> BatchProcessor.Result {
    let kind =
      switch error.exitCode {
      case .malformedInput: "malformed"
      case .unreadableInput: "unreadable"
      default: "failed"
      }
    // Spelled out in JSON, where a bare number could be anything.
    let location: String? =
      switch error.location {
      case .none: nil
      case .line(let line): "line \(line)"
      case .offset(let offset): "@\(offset)"
      }
    let file = error.file == "blob" ? nil : error.file
    return failed(kind, error.message, location: location, file: file)
  }

  private func rendered(error: String?) -> BatchProcessor.Result {
    var object = CompactJSON.Object()
    object.add("schemaVersion", "1")
    object.add("input", string: input)
    object.add("line", String(line))
    object.add("id", id ?? "null")
    object.add("ok", error == nil ? "true" : "false")
    object.add("generation", string: generation)
    object.add("container", string: container)
    object.add("resumable", resumable.map { $0 ? "true" : "false" } ?? "null")
    object.add("findings", CompactJSON.findings(findings))
    object.add("output", output ?? "null")
    guard let outputBlob else {
      object.add("error", error ?? "null")
      return BatchProcessor.Result(json: object.rendered, ok: error == nil)
    }
    return BatchProcessor.Result(
      json: object.openText, blob: outputBlob,
      tail: outputTail + ",\"error\":" + (error ?? "null") + "}", ok: error == nil)
  }

}

/// JSON on one line, as NDJSON needs it.
enum CompactJSON {
  /// An object built field by field, in the order added, values already JSON.
  struct Object {
    private var text = "{"

    /// Adds a field whose value is already JSON.
    mutating func add(_ name: String, _ json: String) {
      if text.utf8.count > 1 { text += "," }
      appendJSONString(name, to: &text)
      text += ":"
      text += json
    }

    /// Adds a string field, `null` when absent.
    mutating func add(_ name: String, string: String?) {
      add(name, CompactJSON.string(string))
    }

    /// The object's text.
    var rendered: String { text + "}" }

    /// The object's text so far, without its closing brace: for a caller that adds the rest.
    var openText: String { text }
  }

  /// A quoted, escaped string, or `null`.
  static func string(_ value: String?) -> String {
    guard let value else { return "null" }
    var quoted = ""
    appendJSONString(value, to: &quoted)
    return quoted
  }

  /// Findings as `[{"code","severity","message","path"}]`.
  static func findings(_ findings: [Finding]) -> String {
    "["
      + findings.map { finding in
        var object = Object()
        object.add("code", string: finding.code)
        object.add("severity", string: finding.severity.rawValue)
        object.add("message", string: finding.message)
        object.add("path", string: finding.path)
        return object.rendered
      }.joined(separator: ",") + "]"
  }
}

import PropertyList
import ResumeData

/// A JSON object as the commands print one: one field a line, in the order added, values already
/// rendered as JSON.
struct JSONObject {
  private var fields: [(name: String, value: String)] = []

  /// An object whose first field is `schemaVersion` (every top-level object has it).
  static func document(schemaVersion: Int = 1) -> JSONObject {
    var object = JSONObject()
    object.add("schemaVersion", String(schemaVersion))
    return object
  }

  /// Adds a field whose value is already JSON.
  mutating func add(_ name: String, _ json: String) {
    fields.append((name, json))
  }

  /// Adds a string field, `null` when absent.
  mutating func add(_ name: String, string: String?) {
    add(name, JSON.string(string))
  }

  /// The object at nesting `level` (0 for a top-level object): its fields indented one level
  /// deeper, its closing brace at `level`.
  func rendered(level: Int = 0) -> String {
    let inner = JSON.indent(level + 1)
    let body = fields.map { inner + JSON.string($0.name) + ": " + $0.value }
    return "{\n" + body.joined(separator: ",\n") + "\n" + JSON.indent(level) + "}"
  }
}

/// JSON values as every command writes them.
enum JSON {
  /// A quoted, escaped string, or `null`.
  static func string(_ value: String?) -> String {
    guard let value else { return "null" }
    var quoted = ""
    appendJSONString(value, to: &quoted)
    return quoted
  }

  /// An array of already rendered items, one a line, at nesting `level`; `[]` when empty.
  static func array(_ items: [String], level: Int) -> String {
    guard !items.isEmpty else { return "[]" }
    let inner = indent(level + 1)
    return "[\n" + items.map { inner + $0 }.joined(separator: ",\n") + "\n" + indent(level) + "]"
  }

  /// Findings as `[{"code", "severity", "message", "path"}]`, one a line, at nesting `level`;
  /// with `outcomes` (one a finding), each also has `"outcome"`.
  static func findings(_ findings: [Finding], judgements: [Judgement?]? = nil, level: Int)
    -> String
  {
    array(
      findings.indices.map { index in
        let finding = findings[index]
        // With judgements, every finding has both fields, null where there is none.
        let outcome =
          judgements.map {
            ", \"outcome\": \(string($0[index]?.outcome.rawValue)), \"sessionOutcomes\": "
              + sessionOutcomes($0[index]?.sessions)
          } ?? ""
        return
          "{\"code\": \(string(finding.code)), \"severity\": \(string(finding.severity.rawValue)), "
          + "\"message\": \(string(finding.message)), \"path\": \(string(finding.path))\(outcome)}"
      }, level: level)
  }

  /// `{"foreground": …, "background": …}`, or `null` when the kinds of session agree.
  static func sessionOutcomes(_ sessions: SessionOutcomes?) -> String {
    guard let sessions else { return "null" }
    return "{\"foreground\": \(string(sessions.foreground.rawValue)), "
      + "\"background\": \(string(sessions.background.rawValue))}"
  }

  /// The indentation of nesting `level`: two spaces a level.
  static func indent(_ level: Int) -> String { String(repeating: "  ", count: level) }
}

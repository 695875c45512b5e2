import PortableFoundation
import PropertyList

extension ResolvedNode {
  /// The tree as indented text, one value per line: `@UID` before each object, classes after
  /// instances, strings quoted, data as its length and up to 64 bytes of hex.
  ///
  /// - Parameters:
  ///   - label: what to print before the root (for example `root`).
  ///   - indent: the indentation of the first line, in levels of two spaces.
  public func text(label: String, indent: Int = 0) -> String {
    var out = ""
    render(label: label, indent: indent, into: &out)
    return out
  }

  private func render(label: String, indent: Int, into out: inout String) {
    let pad = String(repeating: "  ", count: indent)
    let prefix = label.isEmpty ? pad : pad + label + ": "
    switch self {
    case .null:
      out += prefix + "nil\n"
    case .value(let value, let uid):
      out += prefix + (uid.map { "@\($0) " } ?? "") + Self.describe(value) + "\n"
    case .object(let uid, let chain, let fields):
      out += prefix + "@\(uid) " + Self.describe(chain: chain) + "\n"
      for field in fields { field.node.render(label: field.key, indent: indent + 1, into: &out) }
    case .list(let elements):
      out += prefix + "[\(elements.count)]\n"
      for (index, element) in elements.enumerated() {
        element.render(label: "[\(index)]", indent: indent + 1, into: &out)
      }
    case .dictionary(let fields):
      out += prefix + "{\(fields.count)}\n"
      for field in fields { field.node.render(label: field.key, indent: indent + 1, into: &out) }
    case .nestedArchive(let data, let uid, let archiver, let rootKey, let root):
      out +=
        prefix + (uid.map { "@\($0) " } ?? "")
        + "<\(data.count) bytes: nested \(archiver) archive>\n"
      root.render(label: rootKey, indent: indent + 1, into: &out)
    case .reference(let uid, let isCycle):
      out += prefix + "@\(uid) " + (isCycle ? "(cycle: contains itself)" : "(shown above)") + "\n"
    case .truncated(let reason):
      out += prefix + "… (not shown: \(reason))\n"
    }
  }

  static func describe(chain: [String]) -> String {
    guard let first = chain.first else { return "<no class>" }
    return chain.count > 1 ? "\(first) (\(chain.dropFirst().joined(separator: " : ")))" : first
  }

  static func describe(_ value: PropertyListValue) -> String {
    switch value {
    case .string(let string):
      var quoted = ""
      appendJSONString(string, to: &quoted)
      return quoted
    case .integer(let integer): return integer.description
    case .real(let real):
      return real.isSinglePrecision ? "\(Float(real.value)) (32-bit)" : "\(real.value)"
    case .boolean(let flag): return flag ? "true" : "false"
    case .date(let date): return "date \(date.timeIntervalSinceReferenceDate) s after 2001-01-01"
    case .uid(let uid): return "UID \(uid)"
    case .data(let data):
      let shown = data.prefix(64).map { byte in
        let digits = String(byte, radix: 16)
        return digits.count == 1 ? "0" + digits : digits
      }.joined()
      return "<\(data.count) bytes"
        + (data.isEmpty ? "" : ": " + shown + (data.count > 64 ? "…" : "")) + ">"
    case .array, .dictionary: return value.typedJSON()
    }
  }

  /// The tree as JSON (pretty-printed, without a trailing newline): objects as
  /// `{"uid": N, "class": [...], "fields": {...}}`, plain values in the typed JSON of
  /// `PropertyListValue.typedJSON` plus their `"uid"`, `{"ref": N}` or `{"ref": N, "cycle": true}` for
  /// references, `{"nestedArchive": {...}}`, `{"list": [...]}`, `{"dict": {...}}`, `null`, and
  /// `{"truncated": "reason"}`.
  public func json(indent: Int = 0) -> String {
    var out = ""
    renderJSON(indent: indent, into: &out)
    return out
  }

  private func renderJSON(indent: Int, into out: inout String) {
    let pad = String(repeating: "  ", count: indent + 1)
    let close = String(repeating: "  ", count: indent)
    func fieldsJSON(_ fields: [ResolvedField], into out: inout String) {
      if fields.isEmpty {
        out += "{}"
        return
      }
      out += "{\n"
      for (position, field) in fields.enumerated() {
        out += pad + "  "
        appendJSONString(field.key, to: &out)
        out += ": "
        field.node.renderJSON(indent: indent + 2, into: &out)
        out += position == fields.count - 1 ? "\n" : ",\n"
      }
      out += pad + "}"
    }
    switch self {
    case .null:
      out += "null"
    case .value(let value, let uid):
      out += "{" + (uid.map { "\"uid\": \($0), " } ?? "") + "\"value\": " + value.typedJSON() + "}"
    case .object(let uid, let chain, let fields):
      out += "{\n" + pad + "\"uid\": \(uid),\n" + pad + "\"class\": ["
      for (position, name) in chain.enumerated() {
        if position > 0 { out += ", " }
        appendJSONString(name, to: &out)
      }
      out += "],\n" + pad + "\"fields\": "
      fieldsJSON(fields, into: &out)
      out += "\n" + close + "}"
    case .list(let elements):
      if elements.isEmpty {
        out += "{\"list\": []}"
        return
      }
      out += "{\"list\": [\n"
      for (position, element) in elements.enumerated() {
        out += pad
        element.renderJSON(indent: indent + 1, into: &out)
        out += position == elements.count - 1 ? "\n" : ",\n"
      }
      out += close + "]}"
    case .dictionary(let fields):
      out += "{\"dict\": "
      fieldsJSON(fields, into: &out)
      out += "}"
    case .nestedArchive(let data, let uid, let archiver, let rootKey, let root):
      out += "{\"nestedArchive\": {\n"
      if let uid { out += pad + "\"uid\": \(uid),\n" }
      out += pad + "\"bytes\": \(data.count),\n" + pad + "\"archiver\": "
      appendJSONString(archiver, to: &out)
      out += ",\n" + pad + "\"rootKey\": "
      appendJSONString(rootKey, to: &out)
      out += ",\n" + pad + "\"root\": "
      root.renderJSON(indent: indent + 1, into: &out)
      out += "\n" + close + "}}"
    case .reference(let uid, let isCycle):
      out += isCycle ? "{\"ref\": \(uid), \"cycle\": true}" : "{\"ref\": \(uid)}"
    case .truncated(let reason):
      out += "{\"truncated\": "
      appendJSONString(reason, to: &out)
      out += "}"
    }
  }
}

import CVectorLoops
import PortableFoundation

extension PropertyListValue {
  /// The value as typed JSON: every node is an object with one key naming its plist type, so that
  /// nothing is lost that JSON would otherwise blur (integer vs real, data vs string, UIDs, dates).
  ///
  /// `{"dict": {...}}` (keys in order), `{"array": [...]}`, `{"string": "..."}`, `{"data": "base64"}`,
  /// `{"date": "2001-01-01T00:00:00Z", "seconds": 0}` (seconds since 2001-01-01, exact),
  /// `{"integer": 42}` (exact digits, any size), `{"real": 1.5}` plus `"bits": 32` for 32-bit reals
  /// (`"nan"`, `"+infinity"`, `"-infinity"` as strings), `{"bool": true}`, `{"uid": 7}`.
  ///
  /// - Parameter indent: the current indentation, in levels of two spaces.
  /// - Returns: pretty-printed JSON text without a trailing newline.
  public func typedJSON(indent: Int = 0) -> String {
    var out = ""
    appendTypedJSON(to: &out, indent: indent)
    return out
  }

  func appendTypedJSON(to out: inout String, indent: Int) {
    switch self {
    case .dictionary(let dictionary):
      if dictionary.isEmpty {
        out += "{\"dict\": {}}"
        return
      }
      out += "{\"dict\": {\n"
      for (position, entry) in dictionary.enumerated() {
        out += String(repeating: "  ", count: indent + 1)
        appendJSONString(entry.key, to: &out)
        out += ": "
        entry.value.appendTypedJSON(to: &out, indent: indent + 1)
        out += position == dictionary.count - 1 ? "\n" : ",\n"
      }
      out += String(repeating: "  ", count: indent) + "}}"
    case .array(let elements):
      if elements.isEmpty {
        out += "{\"array\": []}"
        return
      }
      out += "{\"array\": [\n"
      for (position, element) in elements.enumerated() {
        out += String(repeating: "  ", count: indent + 1)
        element.appendTypedJSON(to: &out, indent: indent + 1)
        out += position == elements.count - 1 ? "\n" : ",\n"
      }
      out += String(repeating: "  ", count: indent) + "]}"
    case .string(let string):
      out += "{\"string\": "
      appendJSONString(string, to: &out)
      out += "}"
    case .data(let data):
      out += "{\"data\": \"" + data.base64EncodedString() + "\"}"
    case .date(let date):
      let seconds = date.timeIntervalSinceReferenceDate
      let text = XMLDate.text(seconds).map { "\"\($0)\"" } ?? "null"
      out += "{\"date\": \(text), \"seconds\": \(jsonNumber(seconds))}"
    case .integer(let integer):
      out += "{\"integer\": \(integer)}"
    case .real(let real):
      out +=
        "{\"real\": \(jsonNumber(real.value))" + (real.isSinglePrecision ? ", \"bits\": 32}" : "}")
    case .boolean(let flag):
      out += flag ? "{\"bool\": true}" : "{\"bool\": false}"
    case .uid(let uid):
      out += "{\"uid\": \(uid)}"
    }
  }
}

/// A double as JSON: the shortest text that reads back to the same value, or a string for the
/// values JSON cannot hold.
func jsonNumber(_ value: Double) -> String {
  if value.isNaN { return "\"nan\"" }
  if value.isInfinite { return value < 0 ? "\"-infinity\"" : "\"+infinity\"" }
  return "\(value)"
}

/// Whether UTF-8 text holds a byte a JSON string must escape (a control character, `"` or `\`),
/// sixteen bytes a step (CVectorLoops): most text holds none and is then copied whole, so this
/// scan is most of what writing it costs.
package func jsonNeedsEscapes(_ text: UnsafeRawBufferPointer) -> Bool {
  cvl_json_needs_escapes(text.baseAddress?.assumingMemoryBound(to: UInt8.self), text.count) != 0
}

/// Appends a JSON string literal (RFC 8259 escaping).
public func appendJSONString(_ string: String, to out: inout String) {
  out += "\""
  // Most strings need no escape: appended whole, which is far cheaper than scalar by scalar.
  if !string.withUTF8InPlace({ jsonNeedsEscapes(UnsafeRawBufferPointer($0)) }) {
    out += string
    out += "\""
    return
  }
  for scalar in string.unicodeScalars {
    switch scalar {
    case "\"": out += "\\\""
    case "\\": out += "\\\\"
    case "\n": out += "\\n"
    case "\r": out += "\\r"
    case "\t": out += "\\t"
    case "\u{08}": out += "\\b"
    case "\u{0C}": out += "\\f"
    default:
      if scalar.value < 0x20 {
        let hex = String(scalar.value, radix: 16)
        out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      } else {
        out.unicodeScalars.append(scalar)
      }
    }
  }
  out += "\""
}

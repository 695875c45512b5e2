import KeyedArchive
import PortableFoundation
import PropertyList

/// A value of a document that may hold resume blobs (JSON, or a property list), reduced to what
/// finding them needs: containers with their keys or indexes, strings and data, and the rest.
indirect enum ContainerNode: Sendable {
  case object([(key: String, value: ContainerNode)])
  case array([ContainerNode])
  case string(String)
  case data(Data)
  case other

  init(_ value: PropertyListValue) {
    switch value {
    case .dictionary(let dictionary):
      self = .object(dictionary.map { ($0.key, ContainerNode($0.value)) })
    case .array(let array): self = .array(array.map(ContainerNode.init))
    case .string(let string): self = .string(string)
    case .data(let data): self = .data(data)
    default: self = .other
    }
  }
}

extension ContainerNode {
  /// An archived object graph: dictionaries by their keys, instances by their fields, arrays and
  /// sets by index.
  init(_ value: ArchivedValue, depth: Int = 0) {
    guard depth < 256 else {
      self = .other
      return
    }
    switch value {
    case .string(let string, _): self = .string(string)
    case .data(let data, _): self = .data(data)
    case .array(let elements, _), .set(let elements, _):
      self = .array(elements.map { ContainerNode($0, depth: depth + 1) })
    case .dictionary(let entries, _):
      self = .object(
        entries.map { entry in
          let key: String
          switch entry.key {
          case .string(let string, _): key = string
          case .integer(let integer): key = integer.description
          default: key = "\(entry.key)"
          }
          return (key, ContainerNode(entry.value, depth: depth + 1))
        })
    case .object(let object):
      self = .object(
        object.fields.map { field in
          switch field.value {
          case .inline(let plain): (field.key, ContainerNode(plain))
          case .reference(let referenced): (field.key, ContainerNode(referenced, depth: depth + 1))
          case .references(let referenced):
            (field.key, .array(referenced.map { ContainerNode($0, depth: depth + 1) }))
          }
        })
    default: self = .other
    }
  }
}

/// A strict RFC 8259 reader of a whole JSON document into `ContainerNode`s, with errors at a line
/// and column: for the JSON files that apps keep resume blobs in (as base64 strings).
struct ContainerJSON {
  let bytes: [UInt8]
  var index = 0
  var depth = 0
  static let maximumDepth = 512

  init(_ data: Data) {
    bytes = [UInt8](data)
  }

  /// Reads the document.
  static func read(_ data: Data) throws(PropertyListError) -> ContainerNode {
    var reader = ContainerJSON(data)
    guard String(validating: reader.bytes, as: UTF8.self) != nil else {
      throw PropertyListError(.invalidValue, "the document is not UTF-8", at: .offset(0))
    }
    if reader.bytes.starts(with: [0xEF, 0xBB, 0xBF]) { reader.index = 3 }
    reader.skipSpace()
    let value = try reader.value()
    reader.skipSpace()
    guard reader.index == reader.bytes.count else {
      throw reader.failure("text after the JSON value")
    }
    return value
  }

  func failure(_ message: String) -> PropertyListError {
    var line = 1
    var lineStart = 0
    for offset in 0..<min(index, bytes.count) where bytes[offset] == 0x0A {
      line += 1
      lineStart = offset + 1
    }
    var column = 1
    for offset in lineStart..<min(index, bytes.count) where bytes[offset] & 0xC0 != 0x80 {
      column += 1
    }
    return PropertyListError(.malformed, message, at: .lineColumn(line: line, column: column))
  }

  mutating func skipSpace() {
    while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
  }

  mutating func value() throws(PropertyListError) -> ContainerNode {
    guard index < bytes.count else { throw failure("the document ends where a value was expected") }
    switch bytes[index] {
    case UInt8(ascii: "{"):
      depth += 1
      guard depth <= Self.maximumDepth else {
        throw failure("objects and arrays nested deeper than \(Self.maximumDepth)")
      }
      index += 1
      var members = [(key: String, value: ContainerNode)]()
      skipSpace()
      if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
        index += 1
        depth -= 1
        return .object(members)
      }
      while true {
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
          throw failure("expected a member name in double quotes")
        }
        let key = try string()
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
          throw failure("expected ':' after a member name")
        }
        index += 1
        skipSpace()
        members.append((key, try value()))
        skipSpace()
        guard index < bytes.count else { throw failure("the document ends inside an object") }
        if bytes[index] == UInt8(ascii: ",") {
          index += 1
          continue
        }
        guard bytes[index] == UInt8(ascii: "}") else {
          throw failure("expected ',' or '}' in an object")
        }
        index += 1
        depth -= 1
        return .object(members)
      }
    case UInt8(ascii: "["):
      depth += 1
      guard depth <= Self.maximumDepth else {
        throw failure("objects and arrays nested deeper than \(Self.maximumDepth)")
      }
      index += 1
      var elements = [ContainerNode]()
      skipSpace()
      if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
        index += 1
        depth -= 1
        return .array(elements)
      }
      while true {
        skipSpace()
        elements.append(try value())
        skipSpace()
        guard index < bytes.count else { throw failure("the document ends inside an array") }
        if bytes[index] == UInt8(ascii: ",") {
          index += 1
          continue
        }
        guard bytes[index] == UInt8(ascii: "]") else {
          throw failure("expected ',' or ']' in an array")
        }
        index += 1
        depth -= 1
        return .array(elements)
      }
    case UInt8(ascii: "\""):
      return .string(try string())
    case UInt8(ascii: "t"): try literal("true")
    case UInt8(ascii: "f"): try literal("false")
    case UInt8(ascii: "n"): try literal("null")
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
      try number()
    default:
      throw failure("unexpected \(CapturedText.describe(bytes[index])) where a value was expected")
    }
    return .other
  }

  mutating func literal(_ word: String) throws(PropertyListError) {
    let expected = Array(word.utf8)
    guard bytes.count - index >= expected.count,
      Array(bytes[index..<(index + expected.count)]) == expected
    else { throw failure("expected '\(word)'") }
    index += expected.count
  }

  mutating func number() throws(PropertyListError) {
    let start = index
    if bytes[index] == UInt8(ascii: "-") { index += 1 }
    func digits() -> Int {
      let from = index
      while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
        index += 1
      }
      return index - from
    }
    let whole = digits()
    guard whole > 0 else { throw failure("a number without digits") }
    if whole > 1, bytes[index - whole] == UInt8(ascii: "0") {
      index = start
      throw failure("a number with a leading zero")
    }
    if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
      index += 1
      guard digits() > 0 else { throw failure("a number without digits after its '.'") }
    }
    if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
      index += 1
      if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")
      {
        index += 1
      }
      guard digits() > 0 else { throw failure("a number without digits in its exponent") }
    }
  }

  /// A string at `index` (its opening quote), with its escapes undone.
  mutating func string() throws(PropertyListError) -> String {
    let start = index
    index += 1
    var units = [UInt16]()
    var plain = [UInt8]()
    func flush() {
      units.append(contentsOf: String(decoding: plain, as: UTF8.self).utf16)
      plain.removeAll(keepingCapacity: true)
    }
    while true {
      guard index < bytes.count else {
        index = start
        throw failure("a string that does not end (it starts here)")
      }
      let byte = bytes[index]
      if byte == UInt8(ascii: "\"") {
        index += 1
        break
      }
      guard byte >= 0x20 else { throw failure("a control character inside a string") }
      guard byte == UInt8(ascii: "\\") else {
        plain.append(byte)
        index += 1
        continue
      }
      flush()
      index += 1
      guard index < bytes.count else { throw failure("the document ends inside an escape") }
      let escape = bytes[index]
      index += 1
      switch escape {
      case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): units.append(UInt16(escape))
      case UInt8(ascii: "b"): units.append(0x08)
      case UInt8(ascii: "f"): units.append(0x0C)
      case UInt8(ascii: "n"): units.append(0x0A)
      case UInt8(ascii: "r"): units.append(0x0D)
      case UInt8(ascii: "t"): units.append(0x09)
      case UInt8(ascii: "u"):
        var unit: UInt16 = 0
        for _ in 0..<4 {
          guard index < bytes.count, let digit = CapturedText.hexValue(bytes[index]) else {
            throw failure("\\u without four hex digits")
          }
          unit = unit << 4 | UInt16(digit)
          index += 1
        }
        units.append(unit)
      default:
        index -= 1
        throw failure("an escape JSON does not have (\\\(Character(Unicode.Scalar(escape))))")
      }
    }
    flush()
    guard let string = String(validating: units, as: UTF16.self) else {
      index = start
      throw failure("a string holding half a surrogate pair")
    }
    return string
  }
}

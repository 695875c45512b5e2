import Foundation
import PropertyList
import TestSupport
import Testing

/// `{"a": [1, "abcdefghijklmnopqrst"], "b": true}` as CoreFoundation writes it: 85 bytes.
let goodBinary = hexBytes(
  """
  62 70 6c 69 73 74 30 30                   # 0: bplist00
  d2 01 02 03 06                            # 8: object 0, dict of 2: keys 1 2, values 3 6
  51 61                                     # 13: object 1, "a"
  51 62                                     # 15: object 2, "b"
  a2 04 05                                  # 17: object 3, array: 4 5
  10 01                                     # 20: object 4, integer 1
  5f 10 14 61 62 63 64 65 66 67 68 69 6a    # 22: object 5, ASCII string of 20 (length as int object)
  6b 6c 6d 6e 6f 70 71 72 73 74             #     ...
  09                                        # 45: object 6, true
  08 0d 0f 11 14 16 2d                      # 46: offset table, 1 byte each
  00 00 00 00 00 00 01 01                   # 53: trailer: unused, offset size 1 (@59), ref size 1 (@60)
  00 00 00 00 00 00 00 07                   # 61: object count 7
  00 00 00 00 00 00 00 00                   # 69: top object 0
  00 00 00 00 00 00 00 2e                   # 77: offset table at 46
  """)

let goodValue: PropertyListValue = .dictionary([
  "a": .array([.integer(PropertyListInteger(1)), .string("abcdefghijklmnopqrst")]),
  "b": .boolean(true),
])

/// A named mutation of `goodBinary` and the error it must produce.
struct BinaryMutation: Sendable, CustomTestStringConvertible {
  let name: String
  let at: Int
  let bytes: [UInt8]
  let code: PropertyListError.Code
  let errorOffset: Int
  var testDescription: String { name }

  func apply() -> Data {
    var data = goodBinary
    data.replaceSubrange(at..<(at + bytes.count), with: bytes)
    return data
  }
}

let binaryMutations: [BinaryMutation] = [
  .init(name: "bad magic", at: 0, bytes: Array("xplist00".utf8), code: .malformed, errorOffset: 0),
  .init(
    name: "offset table past the end", at: 77, bytes: [0, 0, 0, 0, 0, 0, 0xff, 0xff],
    code: .malformed, errorOffset: 77),
  .init(
    name: "offset table inside the header", at: 84, bytes: [0x04], code: .malformed, errorOffset: 77
  ),
  .init(name: "reference out of range", at: 19, bytes: [0x07], code: .malformed, errorOffset: 19),
  .init(name: "array containing itself", at: 18, bytes: [0x03], code: .cycle, errorOffset: 18),
  .init(name: "dictionary containing itself", at: 12, bytes: [0x00], code: .cycle, errorOffset: 12),
  .init(
    name: "dictionary key that is not a string", at: 9, bytes: [0x04], code: .malformed,
    errorOffset: 9),
  .init(name: "9-byte offset size", at: 59, bytes: [0x09], code: .malformed, errorOffset: 59),
  .init(name: "0-byte reference size", at: 60, bytes: [0x00], code: .malformed, errorOffset: 60),
  .init(
    name: "trailer that lies about counts", at: 68, bytes: [0x08], code: .malformed, errorOffset: 61
  ),
  .init(
    name: "trailer that declares no objects", at: 68, bytes: [0x00], code: .malformed,
    errorOffset: 61),
  .init(name: "top object out of range", at: 76, bytes: [0x07], code: .malformed, errorOffset: 69),
  .init(
    name: "offset entry into the offset table", at: 52, bytes: [0x2e], code: .malformed,
    errorOffset: 52),
  .init(
    name: "offset entry into the header", at: 52, bytes: [0x03], code: .malformed, errorOffset: 52),
  .init(
    name: "unpaired high surrogate", at: 22, bytes: [0x61, 0xd8, 0x00], code: .invalidValue,
    errorOffset: 23),
  .init(
    name: "unpaired low surrogate", at: 22, bytes: [0x62, 0x00, 0x41, 0xdc, 0x00],
    code: .invalidValue, errorOffset: 25),
  .init(
    name: "non-ASCII byte in an ASCII string", at: 27, bytes: [0xc3], code: .invalidValue,
    errorOffset: 27),
  .init(
    name: "huge data length", at: 22,
    bytes: [0x4f, 0x13, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
    code: .truncated, errorOffset: 23),
  .init(
    name: "huge UTF-16 length", at: 22,
    bytes: [0x6f, 0x13, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
    code: .truncated, errorOffset: 23),
  .init(
    name: "huge array count", at: 17, bytes: [0xaf, 0x13, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff],
    code: .truncated, errorOffset: 18),
  .init(
    name: "length longer than the whole object area", at: 22, bytes: [0x5f, 0x10, 0xff],
    code: .truncated, errorOffset: 23),
  .init(
    name: "string running past the object area", at: 22, bytes: [0x5f, 0x10, 0x20],
    code: .truncated, errorOffset: 25),
  .init(
    name: "length that is not an integer", at: 22, bytes: [0x5f, 0x20], code: .malformed,
    errorOffset: 23),
  .init(name: "32-byte integer", at: 20, bytes: [0x15], code: .malformed, errorOffset: 20),
  .init(name: "2-byte real", at: 20, bytes: [0x21], code: .malformed, errorOffset: 20),
  .init(name: "date with a bad marker", at: 20, bytes: [0x34], code: .malformed, errorOffset: 20),
  .init(
    name: "16-byte integer beyond 64 bits", at: 22,
    bytes: [0x14, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0],
    code: .invalidValue, errorOffset: 23),
  .init(
    name: "16-byte UID beyond 64 bits", at: 22,
    bytes: [0x8f, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5],
    code: .invalidValue, errorOffset: 23),
  .init(name: "unknown marker", at: 20, bytes: [0x70], code: .malformed, errorOffset: 20),
  .init(name: "null object", at: 20, bytes: [0x00], code: .malformed, errorOffset: 20),
  .init(name: "set object", at: 17, bytes: [0xc2], code: .malformed, errorOffset: 17),
]

@Suite("Binary reader")
struct BinaryReaderTests {
  @Test("The good fixture reads to its value, and our writer reproduces it byte for byte")
  func goodFixture() throws {
    #expect(goodBinary.count == 85)
    #expect(try BinaryPropertyListReader().read(goodBinary) == goodValue)
    #expect(try BinaryPropertyListWriter().write(goodValue) == goodBinary)
  }

  @Test("Each named mutation throws its typed error at its offset", arguments: binaryMutations)
  func mutation(_ mutation: BinaryMutation) {
    let data = mutation.apply()
    #expect(data.count == goodBinary.count)
    #expect {
      _ = try BinaryPropertyListReader().read(data)
    } throws: { error in
      guard let error = error as? PropertyListError else { return false }
      return error.code == mutation.code && error.location == .offset(mutation.errorOffset)
    }
  }

  @Test("Every truncation of the good fixture throws a typed error with an offset")
  func truncations() {
    for length in 0..<goodBinary.count {
      #expect(throws: PropertyListError.self, "length \(length)") {
        _ = try BinaryPropertyListReader().read(goodBinary.prefix(length))
      }
    }
  }

  /// `count` arrays, each holding the next; the innermost holds nothing. Built as bytes, since a
  /// value this deep would itself overflow a test thread's stack in recursive code.
  func nestedArrays(_ count: Int) -> Data {
    var bytes = Array("bplist00".utf8)
    var offsets = [Int]()
    for level in 0..<count {
      offsets.append(bytes.count)
      bytes += level == count - 1 ? [0xa0] : [0xa1] + sized(UInt64(level + 1), 2)
    }
    let table = bytes.count
    for offset in offsets { bytes += sized(UInt64(offset), 4) }
    bytes +=
      [0, 0, 0, 0, 0, 0, 4, 2] + sized(UInt64(count), 8) + sized(0, 8) + sized(UInt64(table), 8)
    return Data(bytes)
  }

  @Test("Nesting 512 deep is accepted, 513 and 10,000 deep are refused at a depth limit")
  func nesting() throws {
    #expect(throws: Never.self) { try BinaryPropertyListReader().read(nestedArrays(512)) }
    for depth in [513, 10_000] {
      #expect {
        _ = try BinaryPropertyListReader().read(nestedArrays(depth))
      } throws: { error in
        (error as? PropertyListError)?.code == .limitExceeded
      }
    }
  }

  /// Object i is an array holding object i+1 twice, `levels` deep: 2^(levels+1) − 1 values expanded.
  func doublingArrays(levels: Int) -> Data {
    var bytes = Array("bplist00".utf8)
    var offsets = [Int]()
    for level in 0..<levels {
      offsets.append(bytes.count)
      bytes += [0xa2, UInt8(level + 1), UInt8(level + 1)]
    }
    offsets.append(bytes.count)
    bytes += [0x08]
    let table = bytes.count
    bytes += offsets.map { UInt8($0) }
    bytes +=
      [0, 0, 0, 0, 0, 0, 1, 1] + sized(UInt64(levels + 1), 8) + sized(0, 8)
      + sized(UInt64(table), 8)
    return Data(bytes)
  }

  @Test("Objects referencing each other exponentially are refused, not expanded")
  func exponentialSharing() throws {
    #expect {
      _ = try BinaryPropertyListReader().read(doublingArrays(levels: 60))
    } throws: { error in
      (error as? PropertyListError)?.code == .limitExceeded
    }
    // The budget counts exactly: 10 levels expand to 2,047 values.
    let exact = BinaryPropertyListReader(limits: PropertyListLimits(maximumVisitedElements: 2_047))
    #expect(throws: Never.self) { _ = try exact.read(doublingArrays(levels: 10)) }
    let short = BinaryPropertyListReader(limits: PropertyListLimits(maximumVisitedElements: 2_046))
    #expect(throws: PropertyListError.self) { _ = try short.read(doublingArrays(levels: 10)) }
  }

  @Test("Offsets and references of every width 1 to 8 bytes are read")
  func everyWidth() throws {
    for width in 1...8 {
      // {"k": "v"}: objects at 8, 11, 13; offsets and references `width` bytes wide.
      var bytes = Array("bplist00".utf8)
      bytes += [0xd1] + sized(1, width) + sized(2, width)
      let keyOffset = bytes.count
      bytes += [0x51, 0x6b]
      let valueOffset = bytes.count
      bytes += [0x51, 0x76]
      let table = bytes.count
      bytes += sized(8, width) + sized(UInt64(keyOffset), width) + sized(UInt64(valueOffset), width)
      bytes += [0, 0, 0, 0, 0, 0, UInt8(width), UInt8(width)]
      bytes += sized(3, 8) + sized(0, 8) + sized(UInt64(table), 8)
      #expect(
        try BinaryPropertyListReader().read(Data(bytes)) == .dictionary(["k": .string("v")]),
        "width \(width)")
    }
  }

  func sized(_ value: UInt64, _ width: Int) -> [UInt8] {
    (0..<width).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
  }

  @Test(
    "Integers, reals and UIDs of every stored width",
    arguments: [
      ("10 7f", PropertyListValue.integer(PropertyListInteger(127))),
      ("11 ff fe", .integer(PropertyListInteger(65_534))),
      ("12 ff ff ff fe", .integer(PropertyListInteger(4_294_967_294))),
      ("13 ff ff ff ff ff ff ff fe", .integer(PropertyListInteger(-2))),
      (
        "14 00 00 00 00 00 00 00 00 ff ff ff ff ff ff ff ff",
        .integer(PropertyListInteger(UInt64.max))
      ),
      ("14 ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff fe", .integer(PropertyListInteger(-2))),
      ("22 3f c0 00 00", .real(PropertyListReal(Float(1.5)))),
      ("23 3f f8 00 00 00 00 00 00", .real(PropertyListReal(1.5))),
      ("33 41 cd cd 65 00 00 00 00", .date(Date(timeIntervalSinceReferenceDate: 1_000_000_000))),
      ("80 05", .uid(5)),
      ("82 01 02 03", .uid(0x01_0203)),
      ("8f 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 07", .uid(7)),
      ("61 00 e9", .string("é")),
      ("62 d8 3d de 42", .string("🙂")),
      ("43 00 01 02", .data(Data([0, 1, 2]))),
    ])
  func scalarWidths(hex: String, expected: PropertyListValue) throws {
    let object = Array(hexBytes(hex))
    var bytes = Array("bplist00".utf8) + object
    bytes +=
      [8, 0, 0, 0, 0, 0, 0, 1, 1] + sized(1, 8) + sized(0, 8) + sized(UInt64(8 + object.count), 8)
    #expect(try BinaryPropertyListReader().read(Data(bytes)) == expected)
  }

  @Test("Any bplist0x version byte is read, as CoreFoundation does")
  func versionByte() throws {
    var data = goodBinary
    data[7] = UInt8(ascii: "x")
    #expect(try BinaryPropertyListReader().read(data) == goodValue)
  }

  @Test("Duplicate dictionary keys keep the last value at the first key's place")
  func duplicateKeys() throws {
    var data = goodBinary
    data[10] = 0x01  // the second key is now "a" again
    let value = try BinaryPropertyListReader().read(data)
    #expect(value.dictionaryValue?.keys == ["a"])
    #expect(value["a"] == .boolean(true))
  }
}

/// Every binary plist under `Fixtures/`, by path relative to the repository.
let binaryFixtures: [String] = {
  let root = repositoryRoot.appendingPathComponent("Fixtures")
  guard let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
  else { return [] }
  var paths = [String]()
  for case let url as URL in enumerator where !url.hasDirectoryPath {
    if let data = try? Data(contentsOf: url), data.starts(with: Array("bplist00".utf8)) {
      paths.append(String(url.path.dropFirst(repositoryRoot.path.count + 1)))
    }
  }
  return paths.sorted()
}()

@Suite("Binary fixtures")
struct BinaryFixtureTests {
  @Test("The fixtures folder holds binary plists") func present() {
    #expect(binaryFixtures.count >= 4)
  }

  @Test(
    "Every truncation of each binary fixture throws a typed error with an offset",
    arguments: binaryFixtures)
  func truncations(path: String) throws {
    let data = try Data(contentsOf: repositoryRoot.appendingPathComponent(path))
    for length in 0..<data.count {
      do {
        _ = try BinaryPropertyListReader().read(data.prefix(length))
        Issue.record("\(path) truncated to \(length) bytes was accepted")
      } catch let error as PropertyListError {
        if case .offset = error.location {
        } else {
          Issue.record("\(path) at \(length): no offset in \(error)")
        }
      }
    }
  }
}

@Suite("Value model")
struct ValueModelTests {
  @Test("Equality is reflexive even for NaN dates and reals, and ignores dictionary order")
  func equality() {
    let nanDate = PropertyListValue.date(Date(timeIntervalSinceReferenceDate: .nan))
    #expect(nanDate == nanDate)
    #expect(Set([nanDate, nanDate]).count == 1)
    let nan = PropertyListValue.real(PropertyListReal(Double.nan))
    #expect(nan == .real(PropertyListReal(-Double.nan)))
    #expect(PropertyListValue.real(PropertyListReal(1.5)) != .real(PropertyListReal(Float(1.5))))
    let ab: PropertyListValue = .dictionary(["a": .boolean(true), "b": .boolean(false)])
    let ba: PropertyListValue = .dictionary(["b": .boolean(false), "a": .boolean(true)])
    #expect(ab == ba)
    #expect(ab.hashValue == ba.hashValue)
    #expect(ab.dictionaryValue?.keys == ["a", "b"])
  }

  @Test("Integers span Int64.min ... UInt64.max and compare by value")
  func integers() {
    #expect(PropertyListInteger(Int64(5)) == PropertyListInteger(UInt64(5)))
    #expect(PropertyListInteger(UInt64.max).int64Value == nil)
    #expect(PropertyListInteger(UInt64.max).description == "18446744073709551615")
    #expect(PropertyListInteger(Int64.min) < PropertyListInteger(UInt64.max))
    #expect(PropertyListInteger(-1).uint64Value == nil)
  }

  @Test("Dictionary edits keep order; removal and re-insertion append")
  func dictionaryEdits() {
    var dictionary: PropertyListDictionary = ["x": .boolean(true), "y": .boolean(false)]
    dictionary["x"] = .string("replaced")
    #expect(dictionary.keys == ["x", "y"])
    dictionary["x"] = nil
    dictionary["x"] = .boolean(true)
    #expect(dictionary.keys == ["y", "x"])
    for index in 0..<40 { dictionary["k\(index)"] = .integer(PropertyListInteger(index)) }
    dictionary["k3"] = nil
    #expect(dictionary["k4"] == .integer(PropertyListInteger(4)))
    #expect(dictionary["k3"] == nil)
    #expect(dictionary.count == 41)
  }
}

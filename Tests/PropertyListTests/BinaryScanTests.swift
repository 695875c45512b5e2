import Foundation
@_spi(Differential) import PropertyList
import TestSupport
import Testing

/// A binary plist of the given objects (each its bytes from the marker on), with one-byte
/// references and one-byte offsets (two-byte ones past 255 bytes): small enough to write the
/// objects out by hand.
func handmadePlist(_ objects: [[UInt8]], top: Int = 0, referenceSize: Int = 1) -> Data {
  var bytes = Array("bplist00".utf8)
  var offsets = [Int]()
  for object in objects {
    offsets.append(bytes.count)
    bytes += object
  }
  let table = bytes.count
  let offsetSize = table > 255 ? 2 : 1
  for offset in offsets {
    bytes += offsetSize == 1 ? [UInt8(offset)] : [UInt8(offset >> 8), UInt8(offset & 0xff)]
  }
  bytes += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)]
  for field in [objects.count, top, table] {
    bytes += (0..<8).reversed().map { UInt8(truncatingIfNeeded: field >> (8 * $0)) }
  }
  return Data(bytes)
}

/// A handmade plist, whether the one-pass scan must accept it by itself, and the limits to read it
/// with.
struct ScanCase: Sendable, CustomTestStringConvertible {
  let name: String
  let data: Data
  let scanAccepts: Bool
  var limits = PropertyListLimits.default
  var testDescription: String { name }
}

let scanCases: [ScanCase] = [
  .init(
    name: "a dictionary of an array and a string", data: goodBinary, scanAccepts: true),
  .init(
    name: "a container referring to one below it (no cycle)",
    data: handmadePlist([[0xa0], [0xa1, 0x00]], top: 1), scanAccepts: false),
  .init(
    name: "an array referred to twice (shared, not a cycle)",
    data: handmadePlist([[0xa2, 0x01, 0x01], [0xa0]]), scanAccepts: false),
  .init(
    name: "an unreachable null object", data: handmadePlist([[0xa1, 0x01], [0x09], [0x00]]),
    scanAccepts: false),
  .init(
    name: "an unreachable dangling reference",
    data: handmadePlist([[0xa1, 0x01], [0x09], [0xa1, 0x07]]), scanAccepts: false),
  .init(
    name: "two equal keys of different objects (not plain)",
    data: handmadePlist([[0xd2, 0x01, 0x02, 0x03, 0x03], [0x51, 0x61], [0x51, 0x61], [0x09]]),
    scanAccepts: true),
  .init(
    name: "one key object twice (not plain)",
    data: handmadePlist([[0xd2, 0x01, 0x01, 0x02, 0x02], [0x51, 0x61], [0x09]]),
    scanAccepts: true),
  .init(
    name: "a UTF-16 key (not plain)",
    data: handmadePlist([[0xd1, 0x01, 0x02], [0x61, 0x00, 0xe9], [0x09]]), scanAccepts: true),
  .init(
    name: "a key that is not a string",
    data: handmadePlist([[0xd1, 0x01, 0x01], [0x09]]), scanAccepts: false),
  .init(
    name: "an 8-byte reference with its top bit set",
    data: {
      // An array (object 0) of one 8-byte reference, all ones, and the one-byte offset table.
      var bytes = Array("bplist00".utf8) + [0xa1] + Array(repeating: 0xff, count: 8)
      bytes += [8, 0, 0, 0, 0, 0, 0, 1, 8]
      bytes += [0, 0, 0, 0, 0, 0, 0, 1] + [0, 0, 0, 0, 0, 0, 0, 0] + [0, 0, 0, 0, 0, 0, 0, 17]
      return Data(bytes)
    }(), scanAccepts: false),
  .init(
    name: "a key that is a dictionary",
    data: handmadePlist([[0xd1, 0x01, 0x02], [0xd0], [0x09]]), scanAccepts: false),
  .init(
    name: "a key running past the object area",
    data: handmadePlist([
      [0xd2, 0x01, 0x02, 0x03, 0x03], [0x51, 0x61], [0x5f, 0x10, 0x40], [0x09],
    ]),
    scanAccepts: false),
  .init(
    name: "eleven visits within a limit of eleven",
    data: handmadePlist([[0xaa] + Array(1...10)] + Array(repeating: [0x09], count: 10)),
    scanAccepts: true, limits: PropertyListLimits(maximumVisitedElements: 11)),
  .init(
    name: "eleven visits over a limit of ten",
    data: handmadePlist([[0xaa] + Array(1...10)] + Array(repeating: [0x09], count: 10)),
    scanAccepts: false, limits: PropertyListLimits(maximumVisitedElements: 10)),
  .init(
    name: "three levels within a depth limit of three",
    data: handmadePlist([[0xa1, 0x01], [0xa1, 0x02], [0xa0]]), scanAccepts: true,
    limits: PropertyListLimits(maximumDepth: 3)),
  .init(
    name: "three levels over a depth limit of two",
    data: handmadePlist([[0xa1, 0x01], [0xa1, 0x02], [0xa0]]), scanAccepts: false,
    limits: PropertyListLimits(maximumDepth: 2)),
  .init(
    name: "a 9-byte UID (legal, left to the walk)",
    data: handmadePlist([[0xa1, 0x01], [0x88, 0, 0, 0, 0, 0, 0, 0, 0, 5]]), scanAccepts: false),
  .init(
    name: "a UID above UInt32.max",
    data: handmadePlist([[0xa1, 0x01], [0x84, 1, 0, 0, 0, 0]]), scanAccepts: false),
]

/// The binary view's one-pass scan (`BinaryLinearScan.swift`) against the reader's walk from the
/// top: the same acceptance, the same errors, the same recorded contents.
@Suite("Binary view: the one-pass scan against the walk")
struct BinaryScanTests {
  @Test(
    "Handmade plists: the scan accepts alone or leaves the walk to decide", arguments: scanCases)
  func handmade(_ scanCase: ScanCase) {
    #expect(BinaryViewDifferential.difference(scanCase.data, limits: scanCase.limits) == nil)
    #expect(
      BinaryViewDifferential.scanAccepts(scanCase.data, limits: scanCase.limits)
        == scanCase.scanAccepts)
  }

  @Test(
    "Every mutation of the reader's table gives the walk's own error", arguments: binaryMutations)
  func mutation(_ mutation: BinaryMutation) {
    let data = mutation.apply()
    #expect(BinaryViewDifferential.difference(data) == nil)
    #expect(!BinaryViewDifferential.scanAccepts(data))
  }

  @Test(
    "Plain exactly when every key is ASCII and none is there twice, up to 64 keys",
    arguments: [
      (Array(0..<40).map { "key\($0)" }, true),
      (Array(0..<40).map { "key\($0)" } + ["key7"], false),
      (Array(0..<40).map { "__nsurlrequest_proto_prop_obj_\($0)" }, true),
      (
        Array(0..<40).map { "__nsurlrequest_proto_prop_obj_\($0)" } + [
          "__nsurlrequest_proto_prop_obj_39"
        ], false
      ),
      (Array(0..<64).map { "$\($0)" }, true),
      (Array(0..<65).map { "$\($0)" }, false),
    ])
  func plainDictionaries(_ keys: [String], plain: Bool) throws {
    #expect(try Self.plainness(keys) == plain)
  }

  @Test(
    "A key there twice is found at every length; keys a byte apart, at any place, are distinct",
    arguments: 1...20)
  func keyLengths(_ length: Int) throws {
    let key = String(repeating: "k", count: length)
    // The key, and one key for each of its places with that byte changed.
    let apart =
      [key]
      + (0..<length).map { place in
        String(key.prefix(place)) + "j" + String(key.dropFirst(place + 1))
      }
    #expect(try Self.plainness(apart) == true)
    #expect(try Self.plainness(apart + [key]) == false)
    #expect(try Self.plainness(apart + [apart[length]]) == false)
  }

  // Whether a dictionary of the keys, each a string object of its own, is plain.
  static func plainness(_ keys: [String]) throws -> Bool {
    // A dictionary (object 0) of the keys (objects 1...), each mapping to `true` (the last object).
    let valueObject = UInt8(keys.count + 1)
    let dictionary: [UInt8] =
      [0xdf, 0x10, UInt8(keys.count)] + (1...keys.count).map { UInt8($0) }
      + Array(repeating: valueObject, count: keys.count)
    let strings = keys.map { key -> [UInt8] in
      let bytes = Array(key.utf8)
      return (bytes.count < 15 ? [0x50 | UInt8(bytes.count)] : [0x5f, 0x10, UInt8(bytes.count)])
        + bytes
    }
    let data = handmadePlist([dictionary] + strings + [[0x09]])
    let view = try BinaryPropertyListView(validating: data, limits: .default)
    #expect(view.wasScanned)
    #expect(BinaryViewDifferential.difference(data) == nil)
    return view.dictionariesArePlain
  }

  @Test(
    "Input that is not a binary plist: the view refuses it with the reader's own error",
    arguments: [
      Data("bplist00".utf8),
      Data(repeating: 0x41, count: 45),
      Data("bplist15".utf8) + Data(repeating: 0, count: 40),
      Data("<?xml version=\"1.0\"?><plist><true/></plist>".utf8),
      Data("bplist00".utf8) + Data([0x09]) + Data(repeating: 0, count: 26) + Data([1, 1])
        + Data(repeating: 0, count: 24),
    ])
  func notBinary(_ data: Data) {
    // The header and trailer are checked before the view copies its input.
    let reader = #expect(throws: PropertyListError.self) {
      try BinaryPropertyListReader().read(data)
    }
    let view = #expect(throws: PropertyListError.self) {
      try BinaryPropertyListView(validating: data, limits: .default)
    }
    #expect(view.map { "\($0)" } == reader.map { "\($0)" })
  }

  @Test("A byte above 0x7F anywhere in an ASCII string is refused at its offset", arguments: 1...70)
  func nonASCIIByte(length: Int) throws {
    let start = length < 15 ? 9 : 11
    let marker: [UInt8] = length < 15 ? [0x50 | UInt8(length)] : [0x5f, 0x10, UInt8(length)]
    let clean = Array(repeating: UInt8(ascii: "a"), count: length)
    #expect(
      try BinaryPropertyListReader().read(handmadePlist([marker + clean]))
        == .string(String(repeating: "a", count: length)))
    for position in 0..<length {
      for high: UInt8 in [0x80, 0xff] {
        var bytes = clean
        bytes[position] = high
        let data = handmadePlist([marker + bytes])
        let error = #expect(throws: PropertyListError.self) {
          try BinaryPropertyListReader().read(data)
        }
        #expect(error?.location == .offset(start + position), "length \(length)")
        #expect(!BinaryViewDifferential.scanAccepts(data))
      }
    }
  }

  @Test("Nesting at and past the depth limit")
  func nesting() {
    // Object i is an array holding object i + 1: references go upwards, so the scan decides.
    func nested(_ count: Int) -> Data {
      var bytes = Array("bplist00".utf8)
      var offsets = [Int]()
      for level in 0..<count {
        offsets.append(bytes.count)
        bytes +=
          level == count - 1 ? [0xa0] : [0xa1, UInt8((level + 1) >> 8), UInt8((level + 1) & 0xff)]
      }
      let table = bytes.count
      for offset in offsets { bytes += [UInt8(offset >> 8), UInt8(offset & 0xff)] }
      bytes += [0, 0, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 0, 0, UInt8(count >> 8), UInt8(count & 0xff)]
      bytes += [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, UInt8(table >> 8), UInt8(table & 0xff)]
      return Data(bytes)
    }
    #expect(BinaryViewDifferential.difference(nested(512)) == nil)
    #expect(BinaryViewDifferential.scanAccepts(nested(512)))
    #expect(BinaryViewDifferential.difference(nested(513)) == nil)
    #expect(!BinaryViewDifferential.scanAccepts(nested(513)))
  }

  @Test("Every binary fixture that reads is accepted by the scan alone, nested archives included")
  func fixtures() throws {
    var accepted = 0
    for path in ["plist", "archive", "resume", "repair"].flatMap(fixturesRecursively) {
      let data = try fixture(path)
      guard data.starts(with: Array("bplist00".utf8)) else { continue }
      // Truncated fixtures must fail the same way on both paths.
      #expect(BinaryViewDifferential.difference(data) == nil, "\(path)")
      guard (try? BinaryPropertyListReader().read(data)) != nil else { continue }
      for blob in [data] + nestedBinaryPlists(data) {
        #expect(BinaryViewDifferential.difference(blob) == nil, "\(path)")
        #expect(BinaryViewDifferential.scanAccepts(blob), "\(path)")
        accepted += 1
      }
    }
    #expect(accepted >= 20)
  }

  @Test("Trees written by Foundation and by our writer are accepted by the scan alone")
  func writtenTrees() throws {
    for seed in 0..<200 {
      var generator = TreeGenerator(seed: UInt64(seed) + 90_000, wholeSecondDates: false)
      let tree = generator.tree()
      let theirs = try PropertyListSerialization.data(
        fromPropertyList: foundationObject(tree), format: .binary, options: 0)
      let ours = try tree.encoded(as: .binary)
      for (writer, data) in [("Foundation", theirs), ("ours", ours)] {
        #expect(BinaryViewDifferential.difference(data) == nil, "seed \(seed), \(writer)")
        #expect(BinaryViewDifferential.scanAccepts(data), "seed \(seed), \(writer)")
      }
    }
  }

  /// The data values of a binary plist that are binary plists themselves (request archives).
  func nestedBinaryPlists(_ data: Data) -> [Data] {
    guard let value = try? BinaryPropertyListReader().read(data) else { return [] }
    var found = [Data]()
    func walk(_ value: PropertyListValue) {
      switch value {
      case .data(let bytes) where bytes.starts(with: Array("bplist00".utf8)): found.append(bytes)
      case .array(let elements): elements.forEach(walk)
      case .dictionary(let dictionary): for entry in dictionary.entries { walk(entry.value) }
      default: break
      }
    }
    walk(value)
    return found
  }
}

/// A view made from what a writer knows of its plist must be the view checking the plist makes:
/// the comparison that guards it (in debug builds, and in fuzzing) finds each way facts can lie.
@Suite("Views made from a writer's facts")
struct WrittenViewTests {
  /// `{"a": ["b"]}`: the dictionary, its key, the array, its string; one-byte offsets from 8.
  static let plist = handmadePlist([[0xD1, 1, 2], [0x51, 0x61], [0xA1, 3], [0x51, 0x62]])
  static let contents = [
    WrittenContents(object: 0, start: 9, count: 1), WrittenContents(object: 1, start: 12, count: 1),
    WrittenContents(object: 2, start: 14, count: 1),
    WrittenContents(object: 3, start: 16, count: 1),
  ]

  /// The difference between the view made from these facts and the checked view, or "no view".
  static func difference(
    _ contents: [WrittenContents], plain: Bool = true, maximumUID: UInt64? = nil, depth: Int = 2,
    visits: Int = 4, longest: Int = 1, limits: PropertyListLimits = .default
  ) -> String? {
    contents.withUnsafeBufferPointer { buffer in
      let facts = WrittenPlistFacts(
        contents: buffer, dictionariesArePlain: plain, maximumUID: maximumUID, depth: depth,
        visits: visits, longestValue: longest)
      guard
        let view = BinaryPropertyListView(
          written: plist, facts, limits: limits, verifying: false)
      else { return "no view" }
      return BinaryViewDifferential.difference(written: view, plist, limits: limits)
    }
  }

  @Test("True facts make the checked view; each false fact is found")
  func facts() {
    #expect(Self.difference(Self.contents) == nil)
    var shifted = Self.contents
    shifted[3].start = 15
    #expect(Self.difference(shifted) == "object 3: recorded contents differ")
    #expect(
      Self.difference(Array(Self.contents.dropLast())) == "object 3: recorded contents differ")
    #expect(Self.difference(Self.contents, plain: false) == "dictionariesArePlain differs")
    #expect(Self.difference(Self.contents, maximumUID: 0) == "maximumUID differs")
  }

  @Test(
    "Facts beyond the limits make no view, for the check to decide",
    arguments: [
      (PropertyListLimits(maximumDepth: 1), "no view"),
      (PropertyListLimits(maximumDepth: 2), nil),
      (PropertyListLimits(maximumValueLength: 0), "no view"),
      (PropertyListLimits(maximumVisitedElements: 3), "no view"),
      (PropertyListLimits(maximumVisitedElements: 4), nil),
      (PropertyListLimits(maximumInputSize: 40), "no view"),
    ] as [(PropertyListLimits, String?)])
  func limits(_ limits: PropertyListLimits, _ expected: String?) {
    #expect(Self.difference(Self.contents, limits: limits) == expected)
  }
}

/// A plist of one array (object 0) of `objects` (objects 1...), with references of
/// `referenceSize` bytes: the shapes where the scan in C and the reference scan in Swift could
/// part (widths, long counts, edge values), each decided by both alike.
func arrayPlist(_ objects: [[UInt8]], referenceSize: Int = 1) -> Data {
  let references = (1...objects.count).flatMap { index in
    (0..<referenceSize).reversed().map { UInt8(truncatingIfNeeded: index >> (8 * $0)) }
  }
  return handmadePlist(
    [[0xaf, 0x10, UInt8(objects.count)] + references] + objects, referenceSize: referenceSize)
}

let twoScansCases: [ScanCase] = {
  let ascii = { (count: Int) -> [UInt8] in
    (count < 15 ? [0x50 | UInt8(count)] : [0x5f, 0x10, UInt8(count)])
      + Array(repeating: UInt8(ascii: "k"), count: count)
  }
  var cases: [ScanCase] = [
    .init(
      name: "2-byte references", data: arrayPlist([[0x09], ascii(3)], referenceSize: 2),
      scanAccepts: true),
    .init(
      name: "3-byte references", data: arrayPlist([[0x09], ascii(3)], referenceSize: 3),
      scanAccepts: true),
    .init(
      name: "8-byte references", data: arrayPlist([[0x09], ascii(3)], referenceSize: 8),
      scanAccepts: true),
    .init(
      name: "a string's 2-byte count",
      data: arrayPlist([[0x5f, 0x11, 0x00, 0x03] + Array("abc".utf8)]), scanAccepts: true),
    .init(
      name: "a string's 8-byte count",
      data: arrayPlist([[0x5f, 0x13] + [0, 0, 0, 0, 0, 0, 0, 3] + Array("abc".utf8)]),
      scanAccepts: true),
    .init(
      name: "a count of 2^4 bytes",
      data: arrayPlist([[0x5f, 0x14] + [UInt8](repeating: 0, count: 16)]),
      scanAccepts: false),
    .init(
      name: "a count's 8-byte integer running past the object area",
      data: arrayPlist([[0x4f, 0x13, 0x00]]), scanAccepts: false),
    .init(
      name: "a count introduced by no integer", data: arrayPlist([[0x5f, 0x20, 0x03]]),
      scanAccepts: false),
    .init(
      name: "a 16-byte integer of a zero high half",
      data: arrayPlist([
        [0x14] + [UInt8](repeating: 0, count: 8) + [0x80] + [UInt8](repeating: 0, count: 7)
      ]),
      scanAccepts: true),
    .init(
      name: "a 16-byte negative integer",
      data: arrayPlist([
        [0x14] + [UInt8](repeating: 0xff, count: 8) + [0x80] + [UInt8](repeating: 0, count: 7)
      ]),
      scanAccepts: true),
    .init(
      name: "a 16-byte integer beyond 64 bits",
      data: arrayPlist([
        [0x14] + [UInt8](repeating: 0, count: 7) + [1] + [UInt8](repeating: 0, count: 8)
      ]),
      scanAccepts: false),
    .init(name: "an integer of 2^5 bytes", data: arrayPlist([[0x15, 0]]), scanAccepts: false),
    .init(
      name: "reals, a date, data",
      data: arrayPlist([
        [0x22, 0, 0, 0, 0], [0x23] + [UInt8](repeating: 0, count: 8),
        [0x33] + [UInt8](repeating: 0, count: 8), [0x43, 0xff, 0x80, 0x00],
      ]), scanAccepts: true),
    .init(name: "a 2-byte real", data: arrayPlist([[0x21, 0, 0]]), scanAccepts: false),
    .init(
      name: "a paired UTF-16 string", data: arrayPlist([[0x62, 0xd8, 0x3d, 0xde, 0x00]]),
      scanAccepts: true),
    .init(
      name: "a lone high surrogate", data: arrayPlist([[0x61, 0xd8, 0x3d]]), scanAccepts: false),
    .init(
      name: "a lone low surrogate", data: arrayPlist([[0x62, 0x00, 0x61, 0xde, 0x00]]),
      scanAccepts: false),
    .init(name: "a UID of 2 bytes", data: arrayPlist([[0x81, 0x01, 0x00]]), scanAccepts: true),
    .init(
      name: "a UID of UInt32.max in 4 bytes",
      data: arrayPlist([[0x83, 0xff, 0xff, 0xff, 0xff]]),
      scanAccepts: true),
    .init(name: "a null (never written)", data: arrayPlist([[0x00]]), scanAccepts: false),
    .init(name: "a marker of kind 0x7", data: arrayPlist([[0x70]]), scanAccepts: false),
    .init(
      name: "a string of 3 bytes over a length limit of 2", data: arrayPlist([ascii(3)]),
      scanAccepts: false, limits: PropertyListLimits(maximumValueLength: 2)),
    .init(
      name: "UTF-16 of 4 bytes over a length limit of 3",
      data: arrayPlist([[0x62, 0, 0x61, 0, 0x62]]), scanAccepts: false,
      limits: PropertyListLimits(maximumValueLength: 3)),
    .init(
      name: "a negative depth limit", data: arrayPlist([[0x09]]), scanAccepts: false,
      limits: PropertyListLimits(maximumDepth: -1)),
    .init(
      name: "a negative visit limit", data: arrayPlist([[0x09]]), scanAccepts: false,
      limits: PropertyListLimits(maximumVisitedElements: -1)),
  ]
  // Every length around the vector steps, clean and with a high byte first, in the middle, last.
  for length in [0, 1, 3, 4, 7, 8, 15, 16, 17, 31, 32, 33, 48, 70] {
    cases.append(
      .init(
        name: "an ASCII string of \(length)", data: arrayPlist([ascii(length)]),
        scanAccepts: true))
    for position in Set([0, length / 2, length - 1]) where length > 0 {
      var bytes = ascii(length)
      bytes[bytes.count - length + position] = 0x80
      cases.append(
        .init(
          name: "an ASCII string of \(length), 0x80 at \(position)",
          data: arrayPlist([bytes]), scanAccepts: false))
    }
  }
  return cases
}()

@Suite("Binary view: the one-pass scan in C against the reference in Swift")
struct TwoScansTests {
  @Test("Both scans decide alike, and as expected", arguments: twoScansCases)
  func twoScans(_ scanCase: ScanCase) {
    #expect(BinaryViewDifferential.scanDifference(scanCase.data, limits: scanCase.limits) == nil)
    #expect(BinaryViewDifferential.difference(scanCase.data, limits: scanCase.limits) == nil)
    #expect(
      BinaryViewDifferential.scanAccepts(scanCase.data, limits: scanCase.limits)
        == scanCase.scanAccepts)
  }
}

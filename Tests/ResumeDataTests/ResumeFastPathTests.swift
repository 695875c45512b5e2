import Foundation
@_spi(Differential) import KeyedArchive
import PropertyList
@_spi(Differential) import ResumeData
import TestSupport
import Testing

@Suite("Resume fast path")
struct ResumeFastPathTests {
  @Test(
    "Every fixture reads the same on both paths",
    arguments: blobAndArchiveFixtures())
  func fixtures(_ file: String) throws {
    #expect(ResumeDifferential.difference(try fixture(file)) == nil)
  }

  @Test("Built blobs of every generation read the same on both paths")
  func builtBlobs() throws {
    for blob in try blobs() {
      #expect(ResumeDifferential.difference(blob.bytes) == nil, "\(blob.name)")
    }
  }

  @Test(
    "Binary keyed blobs with plain values are read in place",
    arguments: ["resume/keyed-v4.archive", "resume/keyed-v5-response.archive"])
  func readInPlace(_ file: String) throws {
    let blob = try ResumeData(decoding: fixture(file))
    #expect(blob.isReadInPlace)
    #expect(blob.currentRequest?.isReadInPlace == true)
    _ = blob.findings()
    #expect(blob.isReadInPlace, "diagnosis needs no archive")
    _ = blob.archive
    #expect(!blob.isReadInPlace)
  }

  @Test("Unknown keys are reported for a blob read in place, and after an edit adds one")
  func unknownKeys() throws {
    let unknown = try ResumeData(decoding: fixture("resume/keyed-v5-unknown-key.archive"))
    #expect(unknown.isReadInPlace)
    #expect(unknown.findings().map(\.code).contains("unknown-keys"))
    var known = try ResumeData(decoding: fixture("resume/keyed-v5-response.archive"))
    #expect(known.isReadInPlace)
    #expect(!known.findings().map(\.code).contains("unknown-keys"))
    try known.setEntry("SomethingNew", .string("kept"))
    #expect(known.unknownKeys == ["SomethingNew"])
    #expect(known.findings().map(\.code).contains("unknown-keys"))
  }

  @Test(
    "An untouched blob read in place whose bytes are their own encoding is encoded undecoded",
    arguments: ["resume/keyed-v4.archive", "resume/keyed-v5-response.archive"])
  func encodedInPlace(_ file: String) throws {
    let bytes = try fixture(file)
    let blob = try ResumeData(decoding: bytes)
    #expect(try blob.encoded() == bytes)
    #expect(blob.isReadInPlace, "encoding needs no archive")
    #expect(try blob.repaired(for: .ios13Later).blob?.encoded() == bytes)
    #expect(try ResumeData(decodingEagerly: bytes).encoded() == bytes)
  }

  @Test("A blob read in place whose bytes are not their encoding is encoded as the eager path does")
  func encodedAfresh() throws {
    // The same archive with its trailer's unused bytes set: it reads the same, but the writer
    // leaves them zero.
    var bytes = try fixture("resume/keyed-v4.archive")
    bytes[bytes.count - 30] = 1
    let blob = try ResumeData(decoding: bytes)
    #expect(blob.isReadInPlace)
    let encoded = try blob.encoded()
    #expect(encoded != bytes)
    #expect(encoded == (try ResumeData(decodingEagerly: bytes).encoded()))
    #expect(!blob.isReadInPlace)
  }

  @Test(
    "A blob whose offset table sends an object to a copy of its bytes elsewhere is encoded afresh",
    arguments: [
      ("the envelope dictionary", UInt8(0xD4)), ("a UID", UInt8(0x80)),
    ])
  func objectMovedInTheOffsetTable(_ name: String, marker: UInt8) throws {
    // The same blob twice, with a 9-byte data value: first zeros, to find the object where the
    // writer puts it; then a copy of the object's bytes, the writer's own encoding of that blob.
    var blob = try ResumeData(decoding: fixture("resume/keyed-v4.archive"))
    try blob.setEntry("Pad", .data(Data(count: 9)))
    let sized = try blob.encoded()
    let (offsets, table, offsetSize) = Self.layout(sized)
    let moving = try #require(offsets.indices.first { sized[offsets[$0]] == marker }, "\(name)")
    let copy = sized[offsets[moving]..<offsets[moving + 1]]
    try blob.setEntry("Pad", .data(copy + Data(count: 9 - copy.count)))
    let canonical = try blob.encoded()
    #expect(canonical[offsets[moving]..<offsets[moving + 1]] == copy)
    let payload =
      try #require(
        (0..<(canonical.count - copy.count)).first {
          canonical[$0] == 0x49 && canonical[($0 + 1)..<($0 + 1 + copy.count)] == copy
        }) + 1
    // Every byte where the writer puts it, but the offset table sends the object to the copy.
    var moved = canonical
    for index in 0..<offsetSize {
      moved[table + moving * offsetSize + index] = UInt8(
        truncatingIfNeeded: payload >> (8 * (offsetSize - 1 - index)))
    }
    let read = try ResumeData(decoding: moved)
    #expect(read.isReadInPlace)
    #expect(read.entries == blob.entries)
    #expect(try read.encoded() == canonical)
  }

  @Test("A blob with bytes between its last object and its offset table is encoded afresh")
  func bytesBeforeTheOffsetTable() throws {
    // The fixture is its own encoding (see `encodedInPlace`).
    let canonical = try fixture("resume/keyed-v4.archive")
    let table = Self.bigEndian(canonical[(canonical.count - 8)...])
    var padded = canonical
    padded.insert(contentsOf: [0, 0, 0, 0], at: table)
    for index in 0..<8 {
      padded[padded.count - 8 + index] = UInt8(truncatingIfNeeded: (table + 4) >> (56 - 8 * index))
    }
    let read = try ResumeData(decoding: padded)
    #expect(read.isReadInPlace)
    #expect(try read.encoded() == canonical)
  }

  @Test("A blob that names a class by another string of the same text is encoded afresh")
  func classNamedByAnotherString() throws {
    // An entry whose value is the root's class name puts a string of that text among the
    // archive's objects, beside the constant its class dictionary names twice ($classname, and
    // first in $classes).
    var blob = try ResumeData(decoding: fixture("resume/keyed-v4.archive"))
    try blob.setEntry("Class", .string("NSMutableDictionary"))
    let canonical = try blob.encoded()
    let offsets = Self.layout(canonical).offsets
    let text = Data([0x5F, 0x10, 19]) + Data("NSMutableDictionary".utf8)
    let strings = offsets.indices.filter {
      canonical[offsets[$0]..<(offsets[$0] + text.count)] == text
    }
    #expect(strings.count == 2)
    // The $classes array: NSMutableDictionary, NSDictionary, NSObject.
    let classes = try #require(offsets.first { canonical[$0] == 0xA3 })
    let constant = Int(canonical[classes + 1])
    let other = try #require(strings.first { $0 != constant })
    #expect(strings.contains(constant))
    var renamed = canonical
    renamed[classes + 1] = UInt8(other)
    let read = try ResumeData(decoding: renamed)
    #expect(read.isReadInPlace)
    #expect(read.entries == blob.entries)
    #expect(try read.encoded() == canonical)
  }

  @Test("A blob that refers to a repeated UID by its own copy is encoded afresh")
  func uidNamedByItsCopy() throws {
    // Two entries holding the same string refer to one object, through two UIDs of one value: the
    // writer writes both UIDs but refers to the first twice.
    var blob = try ResumeData(decoding: fixture("resume/keyed-v4.archive"))
    try blob.setEntry("First", .string("same"))
    try blob.setEntry("Second", .string("same"))
    let canonical = try blob.encoded()
    let offsets = Self.layout(canonical).offsets
    let uids = offsets.indices.filter { canonical[offsets[$0]] == 0x80 }
    let (first, copy) = try #require(
      uids.lazy.flatMap { first in
        uids.filter { $0 > first && canonical[offsets[$0] + 1] == canonical[offsets[first] + 1] }
          .map { (first, $0) }
      }.first)
    // The NS.objects array refers to the first twice; make its second reference name the copy.
    let slots = offsets.filter { canonical[$0] >> 4 == 0xA && canonical[$0] & 0x0F != 0x0F }
      .flatMap { array in (0..<Int(canonical[array] & 0x0F)).map { array + 1 + $0 } }
    let slot = try #require(slots.filter { canonical[$0] == first }.dropFirst().first)
    var renamed = canonical
    renamed[slot] = UInt8(copy)
    let read = try ResumeData(decoding: renamed)
    #expect(read.isReadInPlace)
    #expect(read.entries == blob.entries)
    #expect(try read.encoded() == canonical)
  }

  /// A keyed archive of an NSDictionary with `keys` (each a string object of its own, so that a
  /// key twice is two objects) and a string value for each.
  private static func dictionaryArchive(_ keys: [String]) throws -> Data {
    let count = UInt64(keys.count)
    var objects: [PropertyListValue] = [.string("$null")]
    let root = PropertyListDictionary(uniqueKeys: [
      ("NS.keys", .array((0..<count).map { .uid(2 + $0) })),
      ("NS.objects", .array((0..<count).map { .uid(2 + count + $0) })),
      ("$class", .uid(2 + 2 * count)),
    ])
    objects.append(.dictionary(root))
    objects += keys.map { .string($0) }
    objects += keys.indices.map { .string("https://example.com/\($0)") }
    objects.append(
      .dictionary(
        PropertyListDictionary(uniqueKeys: [
          ("$classname", .string("NSDictionary")),
          ("$classes", .array([.string("NSDictionary"), .string("NSObject")])),
        ])))
    let envelope = PropertyListDictionary(uniqueKeys: [
      ("$version", .integer(PropertyListInteger(100_000))),
      ("$archiver", .string("NSKeyedArchiver")),
      ("$top", .dictionary(PropertyListDictionary(uniqueKeys: [("root", .uid(1))]))),
      ("$objects", .array(objects)),
    ])
    return try BinaryPropertyListWriter().write(.dictionary(envelope))
  }

  @Test(
    "A root dictionary with a key twice is left to the eager path, which reads it the same",
    arguments: [
      ["NSURLSessionDownloadURL", "NSURLSessionDownloadURL"],
      ["NSURLSessionDownloadURL", "NSURLSessionResumeEntityTag", "NSURLSessionDownloadURL"],
      ["NSURLSessionDownloadURL", "Other", "Other"],
    ])
  func keyTwice(_ keys: [String]) throws {
    let bytes = try Self.dictionaryArchive(keys)
    #expect(ResumeDifferential.difference(bytes) == nil)
    #expect((try? ResumeData(decoding: bytes))?.isReadInPlace != true)
    // Without the second, read in place.
    let once = try Self.dictionaryArchive(Array(keys.dropLast()))
    #expect(try ResumeData(decoding: once).isReadInPlace)
    #expect(ResumeDifferential.difference(once) == nil)
  }

  /// A big-endian unsigned integer.
  private static func bigEndian(_ bytes: Data.SubSequence) -> Int {
    Int(bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
  }

  /// Where a binary plist's objects start, read from its offset table, and where that table is
  /// and how wide its entries are; it must use 1-byte references, as the tests' edits assume.
  private static func layout(_ plist: Data) -> (offsets: [Int], table: Int, offsetSize: Int) {
    #expect(plist[plist.count - 25] == 1, "1-byte references")
    let offsetSize = Int(plist[plist.count - 26])
    let table = bigEndian(plist[(plist.count - 8)...])
    let offsets = (0..<bigEndian(plist[(plist.count - 24)..<(plist.count - 16)])).map {
      bigEndian(plist[(table + $0 * offsetSize)..<(table + ($0 + 1) * offsetSize)])
    }
    return (offsets, table, offsetSize)
  }

  @Test("Every truncation of a keyed blob reads the same on both paths")
  func truncations() throws {
    let data = try fixture("resume/keyed-v4.archive")
    for length in stride(from: 0, to: data.count, by: 7) {
      #expect(
        ResumeDifferential.difference(data.prefix(length)) == nil, "truncated to \(length) bytes")
    }
  }

  @Test("Bytes flipped across a keyed blob read the same on both paths")
  func mutations() throws {
    let data = try fixture("resume/keyed-v4.archive")
    for position in stride(from: 0, to: data.count, by: 3) {
      var mutated = data
      mutated[position] ^= position % 2 == 0 ? 0x01 : 0x80
      #expect(ResumeDifferential.difference(mutated) == nil, "byte \(position)")
    }
  }
}

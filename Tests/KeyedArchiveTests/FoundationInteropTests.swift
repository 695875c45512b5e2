import Foundation
import KeyedArchive
import PropertyList
import TestSupport
import Testing

// Interoperability with Linux Foundation's NSKeyedArchiver and NSKeyedUnarchiver: archives Foundation
// wrote (Fixtures/archive/foundation, made by make-foundation-archives.swift) decode to exact values,
// and archives this library writes are read back by Foundation as the objects they describe.

/// An archive Foundation made and the value it must decode to.
struct FoundationFixture: Sendable, CustomTestStringConvertible {
  /// The file name in `Fixtures/archive/foundation/`.
  let file: String
  /// The root's expected value.
  let expected: ArchivedValue

  /// The file name.
  var testDescription: String { file }
}

/// A value this library archives and the Foundation object `NSKeyedUnarchiver` must read from it.
struct InteropCase: Sendable, CustomTestStringConvertible {
  /// What the case covers.
  let name: String
  /// The value given to `KeyedArchive(root:rootKey:)`.
  let value: ArchivedValue
  /// Makes the object the archive must be read as: equal (`isEqual`) and of the same class, so that
  /// mutability and booleans are told apart. A closure, because NSObjects are not `Sendable`.
  let expected: @Sendable () -> NSObject

  /// The case's name.
  var testDescription: String { name }
}

/// A root key and container format to write an archive with.
struct ArchiveEncoding: Sendable, CustomTestStringConvertible {
  /// The key under `$top`.
  let rootKey: String
  /// The container.
  let format: PropertyListFormat

  /// `rootKey, format`.
  var testDescription: String { "\(rootKey), \(format)" }
}

/// Reads an archive with Foundation's `NSKeyedUnarchiver`, insecure coding, without trapping on
/// errors (the default failure policy of Linux Foundation aborts the process).
///
/// - Throws: the unarchiver's error.
func foundationUnarchive(_ data: Data, rootKey: String) throws -> Any? {
  let unarchiver = try NSKeyedUnarchiver(forReadingFrom: data)
  unarchiver.requiresSecureCoding = false
  unarchiver.decodingFailurePolicy = .setErrorAndReturn
  defer { unarchiver.finishDecoding() }
  let object = unarchiver.decodeObject(forKey: rootKey)
  if let error = unarchiver.error { throw error }
  return object
}

private func string(_ text: String) -> ArchivedValue { .string(text) }
private func integer(_ value: Int) -> ArchivedValue { .integer(PropertyListInteger(value)) }
private func entry(_ key: String, _ value: ArchivedValue) -> ArchivedDictionaryEntry {
  ArchivedDictionaryEntry(.string(key), value)
}

private let mixedDictionary = ArchivedValue.dictionary([
  // NS.keys order is that of Linux NSDictionary's hash table (deterministic hashing, see the
  // generator), which is also the order the XML variant keeps.
  entry("date", .date(Date(timeIntervalSinceReferenceDate: 700_000_000.5))),
  entry("string", string("plain ASCII")),
  entry("negative", integer(-7)),
  entry("true", .boolean(true)),
  entry("integer", integer(42)),
  entry("double", .real(PropertyListReal(3.25))),
  entry("data", .data(Data([0x00, 0x01, 0xfe, 0xff]))),
  entry("array", .array([string("one"), integer(2)])),
  entry("dictionary", .dictionary([entry("nested", string("value"))])),
  entry("large", integer(5_000_000_000)),
  entry("unicode", string("Grüße, 日本語, 🙂")),
  entry("false", .boolean(false)),
])

private let relativeURL = ArchivedValue.url(
  ArchivedURL(
    relative: "archive.zip?part=2", base: .url(ArchivedURL(relative: "https://example.com/files/"))
  ))

private let leafArray = ArchivedValue.array([string("leaf")])

private let foundationFixtures: [FoundationFixture] = [
  FoundationFixture(file: "mixed-dictionary.archive", expected: mixedDictionary),
  FoundationFixture(file: "mixed-dictionary.xml.archive", expected: mixedDictionary),
  // Linux Foundation stores equal objects once, so all three "shared" and all three arrays are one
  // object each; decoding expands every reference.
  FoundationFixture(
    file: "shared-objects.archive",
    expected: .array([
      leafArray, leafArray, string("shared"), string("shared"), string("shared"), leafArray,
    ])),
  FoundationFixture(file: "string-root.archive", expected: string("Grüße 🙂")),
  FoundationFixture(file: "number-root.archive", expected: integer(1_234_567)),
  FoundationFixture(file: "url-relative.archive", expected: relativeURL),
  FoundationFixture(file: "url-relative.xml.archive", expected: relativeURL),
  FoundationFixture(
    file: "url-absolute.archive",
    expected: .url(ArchivedURL(relative: "https://example.com/a%20b/c.txt#frag"))),
  FoundationFixture(
    file: "date.archive", expected: .date(Date(timeIntervalSinceReferenceDate: -123_456_789.25))),
  FoundationFixture(file: "data.archive", expected: .data(Data((0..<32).map { UInt8($0 * 8) }))),
  FoundationFixture(
    file: "null-in-array.archive", expected: .array([string("before"), .nsNull, integer(1)])),
  FoundationFixture(file: "set.archive", expected: .set([string("a"), integer(3), string("b")])),
  FoundationFixture(
    file: "uuid.archive", expected: .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!)
  ),
  // Linux Foundation archives NSMutableString as a plain string: the mutability is lost.
  FoundationFixture(file: "mutable-string.archive", expected: string("mutable")),
  FoundationFixture(
    file: "mutable-array.archive", expected: .array([string("x"), integer(1)], mutable: true)),
  // The NSMutableArray value comes back immutable: NSMutableDictionary(dictionary:) bridges its values
  // through Swift's Array on Linux.
  FoundationFixture(
    file: "mutable-dictionary.archive",
    expected: .dictionary([entry("key", .array([string("v")]))], mutable: true)),
  FoundationFixture(file: "mutable-set.archive", expected: .set([string("only")], mutable: true)),
  FoundationFixture(
    file: "mutable-data.archive", expected: .data(Data([0xca, 0xfe]), mutable: true)),
]

private let interopCases: [InteropCase] = [
  InteropCase(
    name: "string", value: string("Grüße, 日本語, 🙂"),
    expected: { NSString(string: "Grüße, 日本語, 🙂") }),
  InteropCase(
    name: "mutable string", value: .string("edit me", mutable: true),
    expected: { NSMutableString(string: "edit me") }),
  InteropCase(
    name: "integer", value: integer(42), expected: { NSNumber(value: 42) }),
  InteropCase(
    name: "negative 64-bit integer", value: integer(-5_000_000_000),
    expected: { NSNumber(value: -5_000_000_000 as Int64) }),
  InteropCase(
    name: "real", value: .real(PropertyListReal(3.25)), expected: { NSNumber(value: 3.25) }),
  InteropCase(
    name: "boolean", value: .boolean(true), expected: { NSNumber(value: true) }),
  InteropCase(
    name: "data", value: .data(Data([0, 1, 2, 0xff])),
    expected: { NSData(data: Data([0, 1, 2, 0xff])) }),
  InteropCase(
    name: "mutable data", value: .data(Data([0xca, 0xfe]), mutable: true),
    expected: { NSMutableData(data: Data([0xca, 0xfe])) }),
  InteropCase(
    name: "date", value: .date(Date(timeIntervalSinceReferenceDate: 700_000_000.5)),
    expected: { NSDate(timeIntervalSinceReferenceDate: 700_000_000.5) }),
  InteropCase(
    name: "array", value: .array([string("a"), integer(1), .boolean(false)]),
    expected: {
      NSArray(array: [NSString(string: "a"), NSNumber(value: 1), NSNumber(value: false)])
    }),
  InteropCase(
    name: "empty array", value: .array([]), expected: { NSArray() }),
  InteropCase(
    name: "mutable array", value: .array([string("a")], mutable: true),
    expected: { NSMutableArray(array: [NSString(string: "a")]) }),
  InteropCase(
    name: "set", value: .set([string("a"), integer(2)]),
    expected: { NSSet(array: [NSString(string: "a"), NSNumber(value: 2)]) }),
  InteropCase(
    name: "dictionary", value: .dictionary([entry("k", string("v")), entry("n", integer(1))]),
    expected: {
      NSDictionary(
        objects: [NSString(string: "v"), NSNumber(value: 1)],
        forKeys: [NSString(string: "k"), NSString(string: "n")])
    }),
  InteropCase(
    name: "mutable dictionary", value: .dictionary([entry("k", string("v"))], mutable: true),
    expected: {
      NSMutableDictionary(objects: [NSString(string: "v")], forKeys: [NSString(string: "k")])
    }),
  InteropCase(
    name: "absolute URL", value: .url(ArchivedURL(relative: "https://example.com/a%20b?q=1")),
    expected: { NSURL(string: "https://example.com/a%20b?q=1")! }),
  InteropCase(
    name: "URL relative to a base", value: relativeURL,
    expected: {
      NSURL(string: "archive.zip?part=2", relativeTo: URL(string: "https://example.com/files/"))!
    }),
  InteropCase(
    name: "UUID", value: .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
    expected: { NSUUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")! }),
  InteropCase(
    name: "NSNull in an array", value: .array([.nsNull, string("after")]),
    expected: { NSArray(array: [NSNull(), NSString(string: "after")]) }),
  InteropCase(
    name: "nested collections",
    value: .dictionary([
      entry("list", .array([.dictionary([entry("deep", .array([integer(7), string("x")]))])])),
      entry("when", .date(Date(timeIntervalSinceReferenceDate: 0))),
    ]),
    expected: {
      let deep = NSArray(array: [NSNumber(value: 7), NSString(string: "x")])
      let inner = NSDictionary(objects: [deep], forKeys: [NSString(string: "deep")])
      return NSDictionary(
        objects: [NSArray(array: [inner]), NSDate(timeIntervalSinceReferenceDate: 0)],
        forKeys: [NSString(string: "list"), NSString(string: "when")])
    }),
]

private let encodings: [ArchiveEncoding] = [
  ArchiveEncoding(rootKey: "NSKeyedArchiveRootObjectKey", format: .binary),
  ArchiveEncoding(rootKey: "root", format: .binary),
  ArchiveEncoding(rootKey: "NSKeyedArchiveRootObjectKey", format: .xml),
  ArchiveEncoding(rootKey: "root", format: .xml),
]

/// Archives crossing between this library and Linux Foundation, in both directions.
@Suite("Foundation interop")
struct FoundationInteropTests {
  @Test("Foundation-made archives decode to exact values", arguments: foundationFixtures)
  func decodesFoundationArchive(fixture file: FoundationFixture) throws {
    let archive = try KeyedArchive(decoding: try fixture("archive/foundation/" + file.file))
    #expect(archive.rootKey == "root")
    #expect(archive.archiver == "NSKeyedArchiver")
    #expect(archive.format == (file.file.hasSuffix(".xml.archive") ? .xml : .binary))
    #expect(try archive.decodeRoot() == file.expected)
  }

  @Test(
    "NSKeyedUnarchiver reads what KeyedArchive(root:) writes",
    arguments: interopCases, encodings)
  func foundationReadsOurArchive(interop: InteropCase, encoding: ArchiveEncoding) throws {
    let data = try KeyedArchive(root: interop.value, rootKey: encoding.rootKey)
      .encoded(as: encoding.format)
    let object = try #require(try foundationUnarchive(data, rootKey: encoding.rootKey) as? NSObject)
    let expected = interop.expected()
    #expect(object.isEqual(expected), "\(object) is not \(expected)")
    #expect(type(of: object) == type(of: expected), "read a \(type(of: object))")
  }

  @Test("Secure unarchiving with the root key reads what we write", arguments: interopCases)
  func secureUnarchive(interop: InteropCase) throws {
    let data = try KeyedArchive(root: interop.value, rootKey: "root").encoded()
    let classes: [AnyClass] = [
      NSString.self, NSNumber.self, NSData.self, NSDate.self, NSArray.self, NSSet.self,
      NSDictionary.self, NSURL.self, NSUUID.self, NSNull.self,
    ]
    let object = try #require(
      try NSKeyedUnarchiver.unarchivedObject(ofClasses: classes, from: data) as? NSObject)
    #expect(object.isEqual(interop.expected()))
  }

  @Test(
    "A Foundation-made archive decoded and encoded again decodes to the same value",
    arguments: foundationFixtures)
  func reencodesFoundationArchive(fixture file: FoundationFixture) throws {
    let bytes = try fixture("archive/foundation/" + file.file)
    let archive = try KeyedArchive(decoding: bytes)
    let value = try archive.decodeRoot()
    // The archive as read, written again.
    let rewritten = try KeyedArchive(decoding: try archive.encoded())
    #expect(rewritten.format == archive.format)
    #expect(try rewritten.decodeRoot() == value)
    // The decoded value, archived anew.
    let rebuilt = try KeyedArchive(decoding: try KeyedArchive(root: value).encoded())
    #expect(try rebuilt.decodeRoot() == value)
    // Foundation reads the rebuilt archive as it reads its own.
    let original = try #require(try foundationUnarchive(bytes, rootKey: "root") as? NSObject)
    let reread = try #require(
      try foundationUnarchive(rebuilt.encoded(), rootKey: "NSKeyedArchiveRootObjectKey")
        as? NSObject)
    #expect(reread.isEqual(original), "\(reread) is not \(original)")
  }

  // Linux Foundation's NSKeyedArchiveRootObjectKey is "root", and its top-level API reads only that
  // key; archives keyed by the literal "NSKeyedArchiveRootObjectKey" (CFNetwork's) need
  // decodeObject(forKey:).
  @Test("unarchivedObject(ofClasses:from:) reads only the root key")
  func topLevelAPIReadsOnlyRoot() throws {
    #expect(NSKeyedArchiveRootObjectKey == "root")
    let data = try KeyedArchive(root: .string("x"), rootKey: "NSKeyedArchiveRootObjectKey")
      .encoded()
    #expect(throws: (any Error).self) {
      try NSKeyedUnarchiver.unarchivedObject(ofClasses: [NSString.self], from: data)
    }
    #expect(try foundationUnarchive(data, rootKey: "NSKeyedArchiveRootObjectKey") as? String == "x")
  }
}

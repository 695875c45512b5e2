import Foundation
@_spi(Differential) @_spi(InPlace) import KeyedArchive
@_spi(InPlace) import PropertyList
@_spi(Differential) import ResumeData
import TestSupport
import Testing

/// A Network.framework blob's original request is most often its current one archived again as an
/// object of its own; when the two unfold alike (`KeyedArchiveView.unfoldsAlike`), the current
/// one's archive serves for both instead of being written twice.
@Suite("Objects that unfold alike share their archive")
struct SubArchiveAlikeTests {
  /// A keyed archive whose `$objects` are `objects`, its root UID 1.
  static func archive(_ objects: [PropertyListValue]) throws -> Data {
    let envelope: PropertyListDictionary = [
      "$version": .integer(PropertyListInteger(100_000)),
      "$objects": .array(objects),
      "$archiver": .string("NSKeyedArchiver"),
      "$top": .dictionary(["root": .uid(1)]),
    ]
    return try PropertyListValue.dictionary(envelope).encoded(as: .binary)
  }

  /// An instance of class UID `classUID` holding `fields`, in order.
  static func instance(_ classUID: UInt64, _ fields: KeyValuePairs<String, PropertyListValue>)
    -> PropertyListValue
  {
    var dictionary: PropertyListDictionary = ["$class": .uid(classUID)]
    for (key, value) in fields { dictionary[key] = value }
    return .dictionary(dictionary)
  }

  static let thing: PropertyListValue = .dictionary([
    "$classname": .string("Thing"), "$classes": .array([.string("Thing"), .string("NSObject")]),
  ])

  /// Objects 1 and 2 with the fields given, and what follows them from UID 3 on (the class
  /// object last).
  static func pair(
    _ first: KeyValuePairs<String, PropertyListValue>,
    _ second: KeyValuePairs<String, PropertyListValue>, more: [PropertyListValue] = []
  ) throws -> KeyedArchiveView {
    let classUID = UInt64(3 + more.count)
    let objects: [PropertyListValue] =
      [.string("$null"), instance(classUID, first), instance(classUID, second)] + more + [thing]
    return try #require(KeyedArchiveView(try archive(objects), limits: .default))
  }

  struct Case: CustomTestStringConvertible, Sendable {
    let name: String
    let alike: Bool
    let make: @Sendable () throws -> KeyedArchiveView
    var testDescription: String { name }
  }

  static let cases: [Case] = [
    Case(name: "the same fields", alike: true) {
      try pair(
        ["n": .integer(PropertyListInteger(7)), "s": .string("x")],
        ["n": .integer(PropertyListInteger(7)), "s": .string("x")])
    },
    Case(name: "references to the same object", alike: true) {
      try pair(["a": .uid(3)], ["a": .uid(3)], more: [.string("hello")])
    },
    Case(name: "references to two instances alike", alike: true) {
      try pair(
        ["a": .uid(3)], ["a": .uid(4)],
        more: [instance(5, ["v": .string("p")]), instance(5, ["v": .string("p")])])
    },
    Case(name: "a different integer", alike: false) {
      try pair(["n": .integer(PropertyListInteger(7))], ["n": .integer(PropertyListInteger(8))])
    },
    Case(name: "a different string", alike: false) {
      try pair(["s": .string("x")], ["s": .string("y")])
    },
    Case(name: "a UTF-16 string against an ASCII one", alike: false) {
      try pair(["s": .string("été")], ["s": .string("ete")])
    },
    Case(name: "the same UTF-16 string", alike: true) {
      try pair(["s": .string("été")], ["s": .string("été")])
    },
    Case(name: "a real against an integer", alike: false) {
      try pair(["n": .integer(PropertyListInteger(1))], ["n": .real(PropertyListReal(1.0))])
    },
    Case(name: "keys in another order", alike: false) {
      try pair(
        ["n": .integer(PropertyListInteger(7)), "s": .string("x")],
        ["s": .string("x"), "n": .integer(PropertyListInteger(7))])
    },
    Case(name: "a key renamed", alike: false) {
      try pair(["n": .integer(PropertyListInteger(7))], ["m": .integer(PropertyListInteger(7))])
    },
    Case(name: "one field more", alike: false) {
      try pair(
        ["n": .integer(PropertyListInteger(7))],
        ["n": .integer(PropertyListInteger(7)), "m": .integer(PropertyListInteger(7))])
    },
    Case(name: "UID 0 against a reference to a $null string", alike: false) {
      try pair(["a": .uid(0)], ["a": .uid(3)], more: [.string("$null")])
    },
    Case(name: "UID 0 on both sides", alike: true) {
      try pair(["a": .uid(0)], ["a": .uid(0)])
    },
    Case(name: "a UID against the integer it holds", alike: false) {
      try pair(["a": .uid(3)], ["a": .integer(PropertyListInteger(3))], more: [.string("hello")])
    },
    Case(name: "references on to objects unlike", alike: false) {
      try pair(
        ["a": .uid(3)], ["a": .uid(4)],
        more: [instance(5, ["v": .string("p")]), instance(5, ["v": .string("q")])])
    },
    Case(name: "arrays of another length", alike: false) {
      try pair(["a": .array([.uid(0)])], ["a": .array([.uid(0), .uid(0)])])
    },
    Case(name: "a cycle through each", alike: false) {
      // Each refers to itself: unfolding never ends, and the writer refuses both.
      try pair(["a": .uid(1)], ["a": .uid(2)])
    },
  ]

  @Test("Objects 1 and 2 unfold alike or not", arguments: cases)
  func pairs(_ test: Case) throws {
    let view = try test.make()
    #expect(view.unfoldsAlike(1, 2) == test.alike)
    #expect(view.unfoldsAlike(2, 1) == test.alike)
    #expect(view.unfoldsAlike(1, 1))
  }

  @Test("Objects shared over and over: unlike beyond the visits allowed, alike within them")
  func budget() throws {
    // Two separate but equal chains of shared links.
    func twin(_ depth: Int) throws -> KeyedArchiveView {
      // Objects: 0 $null, 1 and 2 the roots, then chain A (depth links), chain B, the end
      // string, the class.
      let end = UInt64(3 + 2 * depth)
      let classUID = end + 1
      func links(from first: UInt64) -> [PropertyListValue] {
        (0..<UInt64(depth)).map { level in
          let next = level + 1 < UInt64(depth) ? first + level + 1 : end
          return Self.instance(classUID, ["l": .uid(next), "r": .uid(next)])
        }
      }
      let objects: [PropertyListValue] =
        [
          .string("$null"), Self.instance(classUID, ["c": .uid(3)]),
          Self.instance(classUID, ["c": .uid(UInt64(3 + depth))]),
        ]
        + links(from: 3) + links(from: UInt64(3 + depth)) + [.string("end"), Self.thing]
      return try #require(KeyedArchiveView(try Self.archive(objects), limits: .default))
    }
    // 2^8 paths: within the visits allowed.
    #expect(try twin(8).unfoldsAlike(1, 2))
    // 2^14 paths: beyond them, so unlike (unsure).
    #expect(try !twin(14).unfoldsAlike(1, 2))
  }

  @Test("The Network.framework fixture: its two requests unfold alike, and write the same bytes")
  func fixtureRequests() throws {
    let data = NetworkFrameworkMask.toggled(try fixture("resume/network-framework.blob"))
    let view = try #require(KeyedArchiveView(data, limits: .default))
    let root = view.object(view.rootUID)
    let current = try #require(view.table.value(root, forKey: "currentRequest"))
    let original = try #require(view.table.value(root, forKey: "originalRequest"))
    let (currentUID, originalUID) = (view.table.uid(current), view.table.uid(original))
    // Objects apart…
    #expect(currentUID != originalUID)
    // …alike, written alike.
    #expect(view.unfoldsAlike(currentUID, originalUID))
    let written = try #require(SubArchiveDifferential.archivedAsRoot(data, firstObjects: 1_000))
    #expect(written[currentUID] == written[originalUID])
    let pairs = try #require(SubArchiveDifferential.alikePairs(data, firstObjects: 1_000))
    #expect(pairs.contains { $0 == (currentUID, originalUID) || $0 == (originalUID, currentUID) })
    #expect(pairs.allSatisfy { written[$0.0] == written[$0.1] })
  }

  @Test(
    "Every archive fixture: any two objects alike are written to the same bytes",
    arguments: fixturesRecursively("resume") + fixturesRecursively("archive"))
  func everyFixture(_ name: String) throws {
    var data = try fixture(name)
    if name.hasSuffix(".blob") { data = NetworkFrameworkMask.toggled(data) }
    guard let pairs = SubArchiveDifferential.alikePairs(data, firstObjects: 200),
      let written = SubArchiveDifferential.archivedAsRoot(data, firstObjects: 200)
    else { return }
    for (first, second) in pairs where written[first] != nil {
      #expect(written[second] == written[first], "objects \(first) and \(second)")
    }
  }

  @Test("A blob whose requests differ writes each; one whose requests are alike writes one")
  func blobs() throws {
    let source = try ResumeData(decoding: try fixture("resume/keyed-v5-response.archive"))
    var fields = URLRequestFields(url: "https://example.com/file?token=1")
    fields.headerFields = [.init("X-A", "a")]
    let first = try URLRequestArchive(fields).encoded()
    fields.headerFields = [.init("X-A", "b")]
    let second = try URLRequestArchive(fields).encoded()
    for (label, original, same) in [("alike", first, true), ("different", second, false)] {
      var entries = source.entries
      entries[ResumeDataKey.currentRequest] = .data(first)
      entries[ResumeDataKey.originalRequest] = .data(original)
      let keyed = try ResumeData(building: entries, as: .keyed)
      let bytes = try keyed.converted(to: .networkFramework).blob.encoded()
      let view = try #require(
        KeyedArchiveView(NetworkFrameworkMask.toggled(bytes), limits: .default), "\(label)")
      let root = view.object(view.rootUID)
      let current = try #require(view.table.value(root, forKey: "currentRequest"))
      let originalUID = try #require(view.table.value(root, forKey: "originalRequest"))
      #expect(
        view.unfoldsAlike(view.table.uid(current), view.table.uid(originalUID)) == same, "\(label)")
      // Read in place, each request is what decoding its archive gives; converted back, the
      // original request is the one the blob was made from.
      let blob = try ResumeData(decoding: bytes)
      #expect(ResumeDifferential.writerDifference(blob) == nil, "\(label)")
      #expect(blob.currentRequest?.headerFields.map(\.value) == ["a"], "\(label)")
      #expect(blob.originalRequest?.headerFields.map(\.value) == [same ? "a" : "b"], "\(label)")
      let back = try blob.converted(to: .keyed).blob
      #expect(
        (back.entries[ResumeDataKey.currentRequest] == back.entries[ResumeDataKey.originalRequest])
          == same, "\(label)")
    }
  }
}

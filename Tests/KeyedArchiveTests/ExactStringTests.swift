import Foundation
import KeyedArchive
import PropertyList
import Testing

/// NSKeyedArchiver makes one object of equal strings, and NSString equality is literal: strings
/// that differ only in Unicode normalization stay two objects, and keep their own characters.
@Suite("Archived strings and class names by exact characters")
struct ExactStringTests {
  static let composed = "caf\u{E9}"
  static let decomposed = "cafe\u{301}"

  @Test("Canonically equivalent strings are two objects; each repeat shares its own")
  func strings() throws {
    let root = ArchivedValue.array([
      .string(Self.composed), .string(Self.decomposed), .string(Self.composed),
      .string(Self.decomposed),
    ])
    let archive = try KeyedArchive(root: root)
    let strings = archive.objects.compactMap(\.stringValue).filter { $0 != "$null" }
    #expect(
      strings.map { Array($0.utf8) } == [Array(Self.composed.utf8), Array(Self.decomposed.utf8)])
    let decoded = try KeyedArchive(decoding: archive.encoded()).decodeRoot()
    guard case .array(let elements, _) = decoded else {
      Issue.record("not an array: \(decoded)")
      return
    }
    let texts = elements.map { element -> [UInt8] in
      if case .string(let text, _) = element { return Array(text.utf8) }
      return []
    }
    #expect(
      texts == [
        Array(Self.composed.utf8), Array(Self.decomposed.utf8), Array(Self.composed.utf8),
        Array(Self.decomposed.utf8),
      ])
  }

  @Test("Class names that differ only in normalization get a class object each")
  func classNames() throws {
    let root = ArchivedValue.array([
      .object(ArchivedObject(classChain: [Self.composed, "NSObject"], fields: [])),
      .object(ArchivedObject(classChain: [Self.decomposed, "NSObject"], fields: [])),
      .object(ArchivedObject(classChain: [Self.composed, "NSObject"], fields: [])),
    ])
    let decoded = try KeyedArchive(decoding: KeyedArchive(root: root).encoded()).decodeRoot()
    guard case .array(let elements, _) = decoded else {
      Issue.record("not an array: \(decoded)")
      return
    }
    let names = elements.map { element -> [UInt8] in
      if case .object(let object) = element { return Array(object.className.utf8) }
      return []
    }
    #expect(
      names == [
        Array(Self.composed.utf8), Array(Self.decomposed.utf8), Array(Self.composed.utf8),
      ])
  }

  @Test("Archived strings that differ only in normalization are not equal")
  func equality() {
    #expect(ArchivedValue.string(Self.composed) != .string(Self.decomposed))
    #expect(ArchivedValue.string(Self.composed) == .string("caf" + "\u{E9}"))
    #expect(
      ArchivedValue.array([.string(Self.composed)]) != .array([.string(Self.decomposed)]))
  }

  @Test("URLs, objects and fields that differ only in normalization are not equal")
  func typesHoldingStrings() {
    #expect(ArchivedURL(relative: Self.composed) != ArchivedURL(relative: Self.decomposed))
    #expect(ArchivedURL(relative: Self.composed) == ArchivedURL(relative: "caf" + "\u{E9}"))
    let field = ArchivedField(Self.composed, .inline(.integer(PropertyListInteger(1))))
    #expect(field != ArchivedField(Self.decomposed, field.value))
    let object = ArchivedObject(classChain: [Self.composed], fields: [field])
    #expect(object != ArchivedObject(classChain: [Self.decomposed], fields: [field]))
    #expect(object == ArchivedObject(classChain: ["caf" + "\u{E9}"], fields: [field]))
    #expect(object[Self.composed] == field.value)
    #expect(object[Self.decomposed] == nil)
  }
}

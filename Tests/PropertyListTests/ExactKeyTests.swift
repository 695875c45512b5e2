import Foundation
import PropertyList
import Testing

private func number(_ value: Int64) -> PropertyListValue { .integer(PropertyListInteger(value)) }

/// Dictionary keys are told apart by their exact characters, as CoreFoundation tells `CFString`
/// keys apart, never by the canonical equivalence Swift's `String ==` uses.
@Suite("Dictionary keys by exact characters")
struct ExactKeyTests {
  // The same text composed and decomposed: equal as Swift strings, two keys to CoreFoundation.
  static let composed = "caf\u{E9}"
  static let decomposed = "cafe\u{301}"

  /// The UTF-8 bytes of each key, in order.
  static func keyBytes(_ dictionary: PropertyListDictionary) -> [[UInt8]] {
    dictionary.keys.map { Array($0.utf8) }
  }

  /// An XML plist of a dictionary: `filler` keys `k0`… then both forms, each with its own value.
  static func xml(filler: Int) -> Data {
    var body = "<plist version=\"1.0\">\n<dict>\n"
    for index in 0..<filler { body += "\t<key>k\(index)</key>\n\t<integer>\(index)</integer>\n" }
    body += "\t<key>\(composed)</key>\n\t<string>composed</string>\n"
    body += "\t<key>\(decomposed)</key>\n\t<string>decomposed</string>\n"
    return Data((body + "</dict>\n</plist>\n").utf8)
  }

  @Test(
    "XML and binary readers keep both keys, in small dictionaries and in indexed large ones",
    arguments: [0, 70])
  func readersKeepBoth(filler: Int) throws {
    let xml = try PropertyListValue.decode(Self.xml(filler: filler)).value
    let binary = try PropertyListValue.decode(xml.encoded(as: .binary)).value
    for value in [xml, binary] {
      let dictionary = try #require(value.dictionaryValue)
      #expect(dictionary.count == filler + 2)
      #expect(
        Self.keyBytes(dictionary).suffix(2) == [
          Array(Self.composed.utf8), Array(Self.decomposed.utf8),
        ])
      #expect(dictionary[Self.composed] == .string("composed"))
      #expect(dictionary[Self.decomposed] == .string("decomposed"))
    }
    // Written out again, both keys are there.
    let again = try PropertyListValue.decode(binary.encoded(as: .xml)).value
    #expect(try #require(again.dictionaryValue).count == filler + 2)
  }

  @Test("Building, setting and removing go by exact characters", arguments: [0, 70])
  func editing(filler: Int) {
    var pairs = (0..<filler).map { ("k\($0)", number(1)) }
    pairs += [(Self.composed, PropertyListValue.string("a")), (Self.decomposed, .string("b"))]
    var dictionary = PropertyListDictionary(pairs)
    #expect(dictionary.count == filler + 2)
    dictionary[Self.decomposed] = PropertyListValue.string("c")
    #expect(dictionary[Self.composed] == PropertyListValue.string("a"))
    #expect(dictionary[Self.decomposed] == .string("c"))
    dictionary[Self.composed] = nil
    #expect(dictionary.count == filler + 1)
    #expect(dictionary[Self.composed] == nil)
    #expect(dictionary[Self.decomposed] == .string("c"))
    #expect(dictionary.position(of: Self.decomposed) == filler)
    // A key that repeats exactly still folds: the last value, at the first key's place.
    let folded = PropertyListDictionary([
      (Self.composed, number(1)) as (String, PropertyListValue), ("x", number(2)),
      (Self.composed, number(3)),
    ])
    #expect(Self.keyBytes(folded) == [Array(Self.composed.utf8), Array("x".utf8)])
    #expect(folded[Self.composed] == number(3))
  }

  @Test("Values and dictionaries that differ only in normalization are not equal")
  func equality() {
    #expect(PropertyListValue.string(Self.composed) != .string(Self.decomposed))
    #expect(PropertyListValue.string(Self.composed) == .string("caf" + "\u{E9}"))
    #expect(
      PropertyListValue.dictionary(["k": .string(Self.composed)])
        != .dictionary(["k": .string(Self.decomposed)]))
    let composed: PropertyListDictionary = [Self.composed: number(1)]
    let decomposed: PropertyListDictionary = [Self.decomposed: number(1)]
    #expect(composed != decomposed)
    #expect(composed == [Self.composed: number(1)])
  }
}

import PropertyList
import Testing

/// `PropertyListDictionary.sortedEntries`, the order CoreFoundation's XML writer gives keys.
@Suite("Dictionary keys in CoreFoundation's order")
struct DictionaryOrderTests {
  // Keys whose UTF-8 and UTF-16 orders differ (U+E000–U+FFFF against characters above U+FFFF),
  // prefixes, and characters of one, two, three and four UTF-8 bytes.
  static let keys = [
    "", "a", "ab", "abc", "b", "B", "é", "f", "z", "\u{7F}", "\u{80}", "\u{7FF}", "\u{800}",
    "\u{D7FF}", "\u{E000}", "\u{FFFD}", "\u{FFFF}", "\u{10000}", "😀", "a😀", "a\u{FFFF}",
    "a\u{E000}b", "a\u{10FFFF}", "NSURLSessionDownloadURL", "NSURLSessionResumeBytesReceived",
  ]

  @Test("Keys come out in UTF-16 code-unit order, from many starting orders", arguments: 0..<50)
  func order(seed: Int) {
    // Every rotation of the list, forwards and backwards.
    let rotated = Self.keys[(seed / 2)...] + Self.keys[..<(seed / 2)]
    let keys = seed % 2 == 0 ? Array(rotated) : rotated.reversed()
    let dictionary = PropertyListDictionary(keys.map { ($0, PropertyListValue.boolean(true)) })
    let expected = Self.keys.sorted { $0.utf16.lexicographicallyPrecedes($1.utf16) }
    #expect(dictionary.sortedEntries.map(\.key) == expected)
  }

  @Test("Keys already in order come back in that order")
  func alreadySorted() {
    let expected = Self.keys.sorted { $0.utf16.lexicographicallyPrecedes($1.utf16) }
    let dictionary = PropertyListDictionary(expected.map { ($0, PropertyListValue.boolean(false)) })
    #expect(dictionary.sortedEntries.map(\.key) == expected)
    #expect(PropertyListDictionary().sortedEntries.isEmpty)
  }
}

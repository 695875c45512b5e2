import Foundation
import TestSupport
import Testing

@_spi(Differential) @testable import PropertyList

/// Base64 laid out in lines of `lineLength` characters (a multiple of four, or not), each line
/// after `separator`.
private func lines(_ base64: String, lineLength: Int, separator: String) -> String {
  var result = ""
  var line = ""
  for character in base64 {
    line.append(character)
    if line.count == lineLength {
      result += separator + line
      line = ""
    }
  }
  if !line.isEmpty { result += separator + line }
  return result + separator
}

@Suite("XML reader's <data>, keys and libxml2 input")
struct XMLReaderPathTests {
  // MARK: <data> against the character-by-character reference

  @Test(
    "Random base64, whitespace, damage and chunk cuts agree with the reference", arguments: 0..<8)
  func randomTextsAgree(batch: Int) {
    var random = SeededGenerator(seed: UInt64(0xDA7A_0000 + batch))
    var earlier: [UInt8] = []
    let whitespace: [String] = [" ", "\n", "\t", "\r\n", "\n\t\t", "  "]
    for _ in 0..<400 {
      let count = Int.random(in: 0...300, using: &random)
      let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
      var base64 = Data(bytes).base64EncodedString()
      if Bool.random(using: &random) { base64 = String(base64.prefix(while: { $0 != "=" })) }
      // Lines as CoreFoundation writes them, of other lengths, or whitespace anywhere.
      var text: String
      switch Int.random(in: 0..<4, using: &random) {
      case 0:
        text = lines(base64, lineLength: 68, separator: "\n\t")
      case 1:
        let length = Int.random(in: 1...80, using: &random)
        text = lines(
          base64, lineLength: length,
          separator: whitespace[Int.random(in: 0..<whitespace.count, using: &random)])
      case 2:
        text = ""
        for character in base64 {
          if Int.random(in: 0..<6, using: &random) == 0 {
            text += whitespace[Int.random(in: 0..<whitespace.count, using: &random)]
          }
          text.append(character)
        }
      default:
        text = base64
      }
      var characters = Array(text.utf8)
      // Now and then a character that does not belong, or padding out of place.
      if !characters.isEmpty, Int.random(in: 0..<4, using: &random) == 0 {
        let damage: [UInt8] = [
          UInt8(ascii: "="), UInt8(ascii: "$"), UInt8(ascii: "-"), 0xC3, 0x00, UInt8(ascii: "<"),
        ]
        characters[Int.random(in: 0..<characters.count, using: &random)] =
          damage[Int.random(in: 0..<damage.count, using: &random)]
      }
      var cuts: [Int] = []
      if !characters.isEmpty, Bool.random(using: &random) {
        cuts = (0..<Int.random(in: 1...6, using: &random)).map { _ in
          Int.random(in: 0...characters.count, using: &random)
        }.sorted()
      }
      // After the last text, whose layout leaves the decoder its guess at a line's length.
      #expect(
        XMLDataDifferential.difference(characters, cuts: cuts, earlier: earlier) == nil,
        "\(String(decoding: characters, as: UTF8.self).debugDescription) cut at \(cuts)")
      earlier = characters
    }
  }

  @Test("Whitespace in every position of a text, and a cut at every position")
  func whitespaceAndCutsEverywhere() {
    let base64 = Array("SGVsbG8sIHdvcmxkIQ==".utf8)
    let earlier = Array(
      lines(String(repeating: "QUJD", count: 60), lineLength: 16, separator: "\n").utf8)
    for position in 0...base64.count {
      for space in [" ", "\n", "\t", "\r\n\t"] {
        var text = base64
        text.insert(contentsOf: Array(space.utf8), at: position)
        #expect(XMLDataDifferential.reference(text) == .bytes(Array("Hello, world!".utf8)))
        for cut in 0...text.count {
          for earlier in [[], earlier] {
            #expect(
              XMLDataDifferential.difference(text, cuts: [cut], earlier: earlier) == nil,
              "\(text) cut at \(cut)")
          }
        }
      }
    }
  }

  @Test("A line-length guess from an earlier element never changes what a later one decodes")
  func lineGuessCarriesOver() {
    let bytes = (0..<600).map { UInt8(truncatingIfNeeded: $0 &* 7) }
    let base64 = Data(bytes).base64EncodedString()
    // Longer, shorter, misaligned and padded last lines, one element after the other.
    var earlier: [UInt8] = []
    for length in [68, 16, 76, 4, 70, 1, 68, 64, 3, 68] {
      let text = Array(lines(base64, lineLength: length, separator: "\n\t").utf8)
      #expect(XMLDataDifferential.reference(text) == .bytes(bytes))
      for cuts in [[], [text.count / 2], [1, 2, 3, 70, 71, 72, 73]] {
        #expect(
          XMLDataDifferential.difference(text, cuts: cuts, earlier: earlier) == nil,
          "lines of \(length), cut at \(cuts)")
      }
      earlier = text
    }
  }

  @Test("Decoded data longer than a small threshold is handed over, shorter is copied")
  func dataOfEverySize() throws {
    for count in [0, 1, 2, 3, 14, 15, 63, 64, 65, 66, 1000] {
      let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 5) }
      let document =
        "<array><data>\(Data(bytes).base64EncodedString())</data><data>AAEC</data></array>"
      #expect(
        try XMLPropertyListReader().read(Data(document.utf8))
          == .array([.data(Data(bytes)), .data(Data([0, 1, 2]))]))
    }
  }

  // MARK: <data> through the reader: text in several callbacks

  /// A document whose `<data>` text libxml2 hands over in pieces: at CR LF line ends, at character
  /// references, around comments and CDATA sections.
  @Test(
    "<data> text in several callbacks",
    arguments: [
      "\r\n\tSGVs\r\n\tbG8s\r\n\tIHdv\r\n\tcmxk\r\n\tIQ==\r\n",
      "SGVsbG8s&#73;HdvcmxkIQ==",
      "SG&#x56;sbG8sIHdvcmxkIQ==",
      "SGVsbG8sIH<!-- between -->dvcmxkIQ==",
      "SGVs<![CDATA[bG8sIHdv]]>cmxkIQ==",
      "SGVsbG8sIHdvcmxkIQ<![CDATA[=]]>=",
      "S&#10;G&#9;V&#32;s&#13;bG8sIHdvcmxkIQ==",
      "SGVsbG8sIHdvcmxkIQ=&#61;",
    ])
  func dataInSeveralCallbacks(_ text: String) throws {
    let value = try XMLPropertyListReader().read(Data("<data>\(text)</data>".utf8))
    #expect(value == .data(Data("Hello, world!".utf8)))
  }

  struct DataError: Sendable, CustomTestStringConvertible {
    var document: String
    var line: Int
    var message: String
    var testDescription: String { document.debugDescription }
  }

  /// Base64 errors are reported at the `<data>` element's line, wherever in its text they are,
  /// and in whichever piece of it.
  @Test(
    "<data> errors keep their message and the element's line",
    arguments: [
      DataError(
        document: "<array>\n<data>\n\tSGVs\r\n\tbG8$\r\n</data></array>", line: 2,
        message: "invalid character '$'"),
      DataError(
        document: "<array>\n\n<data>SGVs&#x24;bG8=</data></array>", line: 3,
        message: "invalid character '$'"),
      DataError(
        document:
          "<array>\n<data>\n\(String(repeating: "QUJD", count: 40))\n\tQU=D\n</data></array>",
        line: 2, message: "characters after '=' padding"),
      DataError(
        document: "<array>\n<data>SGk<![CDATA[=]]>\n=\n=</data></array>", line: 2,
        message: "misplaced '=' padding"),
      DataError(
        document: "<dict>\n<key>k</key>\n<data>\n\tQUJD\n\tQ\n</data></dict>", line: 3,
        message: "a lone final character"),
      DataError(
        document: "<data>\n\(String(repeating: "QUJDREVG", count: 30))\n\tQUJ\u{E9}\n</data>",
        line: 1, message: "invalid byte 0xC3"),
    ])
  func dataErrors(_ error: DataError) throws {
    let thrown = try #require(readError(error.document))
    #expect(thrown.code == .invalidValue)
    #expect(thrown.location == .line(error.line))
    #expect(thrown.message == "invalid base64 in <data> (\(error.message))")
  }

  @Test func dataLengthLimitAcrossCallbacks() throws {
    let limits = PropertyListLimits(maximumValueLength: 6)
    let reader = XMLPropertyListReader(limits: limits)
    #expect(try reader.read(Data("<data>AAAA&#65;AAA</data>".utf8)) == .data(Data(count: 6)))
    let thrown = try #require(
      readError("<array>\n<data>AAAA&#65;AAA\r\nAA==</data></array>", limits: limits))
    #expect(thrown.code == .limitExceeded)
    #expect(thrown.location == .line(2))
    #expect(thrown.message == "<data> longer than 6 bytes")
  }

  // MARK: Keys and dictionaries

  @Test func knownKeysAndNearMisses() throws {
    let keys = [
      "NSURLSessionDownloadURL", "NSURLSessionDownloadURLx", "xNSURLSessionDownloadURL",
      "NSURLSessionDownloadURl", "$top", "$to", "$top ", "CF$UID", "NS.keys", "NS.key",
      "NSURLSessionResumeInfoVersion", "NSURLSessionResumeInfoVersioN", "root", "Root",
    ]
    var document = "<dict>"
    for (index, key) in keys.enumerated() {
      document += "<key>\(key)</key><integer>\(index)</integer>"
    }
    document += "</dict>"
    let dictionary = try #require(
      try XMLPropertyListReader().read(Data(document.utf8)).dictionaryValue)
    #expect(dictionary.keys == keys)
    for (index, key) in keys.enumerated() {
      #expect(dictionary[key] == .integer(PropertyListInteger(Int64(index))))
    }
  }

  @Test("Keys with the same fingerprint but other bytes stay two keys")
  func equalFingerprintsDifferentKeys() throws {
    // Fingerprints go by length and the first and last eight bytes.
    let first = "abcdefgh-1-abcdefgh"
    let second = "abcdefgh-2-abcdefgh"
    let document =
      "<dict><key>\(first)</key><integer>1</integer><key>\(second)</key><integer>2</integer>"
      + "<key>\(first)</key><integer>3</integer></dict>"
    let dictionary = try #require(
      try XMLPropertyListReader().read(Data(document.utf8)).dictionaryValue)
    #expect(dictionary.keys == [first, second])
    #expect(dictionary[first] == .integer(PropertyListInteger(3)))
    #expect(dictionary[second] == .integer(PropertyListInteger(2)))
  }

  @Test("Large dictionaries, with and without duplicate keys, nested in arrays")
  func largeDictionaries() throws {
    for duplicates in [false, true] {
      var document = "<array><dict>"
      for index in 0..<150 {
        let key = duplicates ? "k\(index % 70)" : "k\(index)"
        document += "<key>\(key)</key><array><integer>\(index)</integer><dict/></array>"
      }
      document += "</dict><true/></array>"
      let array = try #require(try XMLPropertyListReader().read(Data(document.utf8)).arrayValue)
      let dictionary = try #require(array.first?.dictionaryValue)
      #expect(dictionary.count == (duplicates ? 70 : 150))
      #expect(
        dictionary["k5"]
          == .array([.integer(PropertyListInteger(duplicates ? 145 : 5)), .dictionary([:])]))
      #expect(array.last == .boolean(true))
    }
  }

  @Test("Whitespace-only text is kept inside strings and keys")
  func whitespaceOnlyText() throws {
    let document = "<dict>\n\t<key> \n\t</key>\n\t<string>\r\n \t</string>\n</dict>\n"
    #expect(
      try XMLPropertyListReader().read(Data(document.utf8))
        == .dictionary([" \n\t": .string("\n \t")]))
  }

  @Test("Text between elements is an error at the line it starts on, after whitespace runs")
  func textAfterWhitespace() throws {
    for document in [
      "<array>\n\n  \r\n<true/>\r\n\r\n  x\n</array>",
      "<array>\n\n  \r\n<true/>\n\n&#32; x\n</array>",
    ] {
      let thrown = try #require(readError(document))
      #expect(thrown.code == .malformed)
      #expect(thrown.location == .line(6))
      #expect(thrown.message == "unexpected text \"x\" in <array>")
    }
  }

  // MARK: libxml2's input

  /// Documents that end at every distance from the 250- and 500-byte windows in which libxml2 2.9
  /// grows and shrinks its input, with the last value's text crossing them.
  @Test func documentsEndingNearTheInputWindows() throws {
    for padding in stride(from: 0, through: 1200, by: 7) {
      let text = String(repeating: "a", count: padding)
      let bytes = Array(repeating: UInt8(7), count: padding)
      let document =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\">\n<dict>\n"
        + "\t<key>s</key>\n\t<string>\(text)</string>\n\t<key>d</key>\n\t<data>\n"
        + lines(Data(bytes).base64EncodedString(), lineLength: 68, separator: "\t")
        + "\n\t</data>\n</dict>\n</plist>\n"
      #expect(
        try XMLPropertyListReader().read(Data(document.utf8))
          == .dictionary(["s": .string(text), "d": .data(Data(bytes))]), "padding \(padding)")
      // Cut short inside the last end tag: libxml2's error.
      let cut = Data(document.utf8.dropLast(12))
      #expect(readError(cut)?.code == .malformed, "padding \(padding)")
    }
  }

  /// Converted documents keep growing their input as libxml2 converts it, over many buffers.
  @Test func largeDocumentsInOtherEncodings() throws {
    let text = String(repeating: "caf\u{E9} \u{E0} la cr\u{E8}me ", count: 3_000)
    let body =
      "<plist><array><string>\(text)</string><data>\(String(repeating: "QUJD", count: 5_000))</data></array></plist>"
    let expected = PropertyListValue.array([
      .string(text), .data(Data(String(repeating: "ABC", count: 5_000).utf8)),
    ])
    // UTF-16 with a byte-order mark.
    var utf16: [UInt8] = [0xFF, 0xFE]
    for unit in ("<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n" + body).utf16 {
      utf16 += [UInt8(unit & 0xFF), UInt8(unit >> 8)]
    }
    #expect(try XMLPropertyListReader().read(Data(utf16)) == expected)
    // ISO-8859-1 by declaration.
    let latin1 = try #require(
      ("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n" + body).data(using: .isoLatin1))
    #expect(try XMLPropertyListReader().read(latin1) == expected)
    // UTF-8 with a byte-order mark.
    #expect(
      try XMLPropertyListReader().read(Data([0xEF, 0xBB, 0xBF] + Array(body.utf8))) == expected)
  }

  /// Each thread keeps its last parser for the next parse: whatever a document leaves behind (an
  /// error halfway, a refused DOCTYPE, namespaces, deep nesting, many names or attributes), the
  /// next one reads as it would with a parser of its own, and the same document gives the same
  /// outcome every time.
  @Test func parsesOnOneThreadAreIndependent() throws {
    let reference = Data(
      (Self.resumeLikeHeader
        + "<dict>\n\t<key>NSURLSessionDownloadURL</key>\n\t<string>u</string>\n"
        + "\t<key>d</key>\n\t<data>\n\tAAEC\n\t</data>\n</dict>\n</plist>\n").utf8)
    let expected = PropertyListValue.dictionary([
      "NSURLSessionDownloadURL": .string("u"), "d": .data(Data([0, 1, 2])),
    ])
    var names = "<array>"
    for index in 0..<2_000 { names += "<n\(index)/>" }
    var attributes = "<plist"
    for index in 0..<1_000 { attributes += " a\(index)=\"\(index)\"" }
    var namespaces = "<plist"
    for index in 0..<200 { namespaces += " xmlns:p\(index)=\"urn:\(index)\"" }
    let others = [
      "<plist xmlns:x=\"urn:x\"><array><string>a</string>",
      "<plist xmlns:x=\"urn:x\">\n<x:dict/></plist>",
      "<x:dict/>",
      "<?xml version=\"1.0\"?>\n<!DOCTYPE plist [<!ENTITY e \"x\">]>\n<plist/>",
      "<plist>\n<string>&e;</string></plist>",
      String(repeating: "<array>", count: 600) + "<true/>"
        + String(repeating: "</array>", count: 600),
      String(repeating: "<array>", count: 5_000),
      names + "</array>",
      attributes + "><true/></plist>",
      namespaces + "><true/></plist>",
      "<plist><data>QUJ$</data></plist>",
      "<dict><key>a</key>",
      "",
      "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><string>abc</string>",
      "<plist><string>abc</string></plist> trailing",
    ]
    let limits = PropertyListLimits(maximumDepth: 100_000)
    func outcome(_ text: String) -> String {
      do {
        return "\(try XMLPropertyListReader(limits: limits).read(Data(text.utf8)))"
      } catch {
        return "\(error)"
      }
    }
    let first = others.map(outcome)
    for round in 0..<3 {
      for (index, text) in others.enumerated() {
        #expect(try XMLPropertyListReader().read(reference) == expected, "after \(index - 1)")
        #expect(outcome(text) == first[index], "document \(index), round \(round)")
      }
    }
    #expect(first[2].contains("unknown element <x:dict>"))
    #expect(first[4].contains("entity reference &e;"))
  }

  /// CoreFoundation's prolog, byte for byte, is not given to libxml2 when `<plist` follows it:
  /// every document reads exactly as it does with a prolog libxml2 reads itself (one space more
  /// before `?>`), values and errors alike, messages and lines included.
  @Test(
    "Documents after CoreFoundation's prolog read as after any prolog",
    arguments: [
      "<plist version=\"1.0\">\n<dict>\n\t<key>a</key>\n\t<data>\n\tAAEC\n\t</data>\n</dict>\n</plist>\n",
      "<plist version=\"1.0\">\n<string>&nbsp;</string>\n</plist>\n",
      "<plist version=\"1.0\">\n<string a=\"&x;\">s</string>\n</plist>\n",
      "<plist version=\"1.0\">\n<array>\n<true/>\n",
      "<plist version=\"1.0\">\n<dict>\n</plist>\n",
      "<plist version=\"1.0\">\n<true/>\n</plist>\n<!DOCTYPE plist>\n",
      "<plist version=\"1.0\">\n<string>a\u{FFFE}</string>\n</plist>\n",
      "<plist version=\"1.0\">\n<string>\u{E9}</string>\n</plist>\n<?pi?>\n<!-- c -->\n",
      "<plist version=\"1.0\">\n<data>QUJ$</data>\n</plist>\n",
      "<plist version=\"1.0\">\n\n\n<integer>x</integer>\n</plist>\n",
      "<plistx/>",
      "<plist",
      "<plist version=\"1.0\">\n<dict><key>CF$UID</key><integer>-1</integer></dict>\n</plist>\n",
      "<plist version=\"1.0\">\n<![CDATA[x]]>\n</plist>\n",
      "<plist version=\"1.0\">\n<string>]]></string>\n</plist>\n",
      "<plist version=\"1.0\">\n<string>\u{1}</string>\n</plist>\n",
    ])
  func appleProlog(_ body: String) throws {
    let apple =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE plist PUBLIC "
      + "\"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n"
    let other = apple.replacingOccurrences(of: "\"UTF-8\"?>", with: "\"UTF-8\" ?>")
    func outcome(_ text: String) -> String {
      do {
        return "\(try XMLPropertyListReader().read(Data(text.utf8)))"
      } catch let error as PropertyListError {
        return "\(error.code) at \(String(describing: error.location)): \(error.message)"
      } catch {
        return "\(error)"
      }
    }
    #expect(outcome(apple + body) == outcome(other + body))
    // Invalid UTF-8 after the prolog, reported with its bytes and line.
    var bytes = Data((apple + body).utf8)
    bytes.append(contentsOf: [0xFF, 0x3C])
    var control = Data((other + body).utf8)
    control.append(contentsOf: [0xFF, 0x3C])
    let reader = XMLPropertyListReader()
    #expect(
      String(describing: Result { try reader.read(bytes) })
        == String(describing: Result { try reader.read(control) }))
  }

  private static let resumeLikeHeader = """
    <?xml version="1.0" encoding="UTF-8"?>
    <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
    <plist version="1.0">

    """
}

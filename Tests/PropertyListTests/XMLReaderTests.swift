import Foundation
import TestSupport
import Testing

@testable import PropertyList

/// Reads an XML document given as text.
private func readXML(_ text: String, limits: PropertyListLimits = .default) throws
  -> PropertyListValue
{
  try XMLPropertyListReader(limits: limits).read(Data(text.utf8))
}

/// The error reading a document throws, or nil when it reads.
func readError(_ bytes: Data, limits: PropertyListLimits = .default) -> PropertyListError? {
  do {
    _ = try XMLPropertyListReader(limits: limits).read(bytes)
    return nil
  } catch let error as PropertyListError {
    return error
  } catch {
    Issue.record("unexpected error type: \(error)")
    return nil
  }
}

func readError(_ text: String, limits: PropertyListLimits = .default) -> PropertyListError? {
  readError(Data(text.utf8), limits: limits)
}

/// Wraps a value in the header CoreFoundation writes; the value starts on line 4.
private func plist(_ body: String) -> String {
  """
  <?xml version="1.0" encoding="UTF-8"?>
  <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
  <plist version="1.0">
  \(body)
  </plist>

  """
}

/// `depth` arrays nested inside each other, innermost holding `<true/>`.
private func nestedArrays(_ depth: Int) -> String {
  plist(
    String(repeating: "<array>", count: depth) + "<true/>"
      + String(repeating: "</array>", count: depth))
}

private func integer(_ value: Int64) -> PropertyListValue { .integer(PropertyListInteger(value)) }
private func real(_ value: Double) -> PropertyListValue { .real(PropertyListReal(value)) }
private func date(_ seconds: Double) -> PropertyListValue {
  .date(Date(timeIntervalSinceReferenceDate: seconds))
}

@Suite("XMLReader")
struct XMLReaderTests {
  // MARK: Values

  static let values: [(String, PropertyListValue)] = [
    // Apple also accepts a bare value element at the root.
    ("<string>hello</string>", .string("hello")),
    (plist("<string>hello</string>"), .string("hello")),
    ("<plist><true/></plist>", .boolean(true)),
    ("<plist version=\"0.9\" other=\"x\"><false/></plist>", .boolean(false)),
    ("<true></true>", .boolean(true)),
    // String content is kept exactly, whitespace and all.
    ("<string>  a\tb \n c  </string>", .string("  a\tb \n c  ")),
    ("<string/>", .string("")),
    ("<string></string>", .string("")),
    ("<string>caf\u{E9} \u{1F600}</string>", .string("caf\u{E9} \u{1F600}")),
    ("<string>&lt;&gt;&amp;&apos;&quot;</string>", .string("<>&'\"")),
    ("<string>&#64;&#x40;&#233;&#x1F600;&#0000065;</string>", .string("@@\u{E9}\u{1F600}A")),
    ("<string>a<![CDATA[<b> & ]]>c</string>", .string("a<b> & c")),
    ("<string><![CDATA[]]></string>", .string("")),
    ("<string>a<!-- comment -->b<?pi x?>c</string>", .string("abc")),
    ("<array/>", .array([])),
    ("<array></array>", .array([])),
    ("<dict/>", .dictionary([:])),
    ("<dict>\n</dict>", .dictionary([:])),
    (
      "<array><string>a</string><integer>1</integer><array/><dict/></array>",
      .array([.string("a"), integer(1), .array([]), .dictionary([:])])
    ),
    (
      "<dict><key>a</key><dict><key>b</key><array><false/></array></dict></dict>",
      .dictionary(["a": .dictionary(["b": .array([.boolean(false)])])])
    ),
    // Keys: empty, comment-only, CDATA, whitespace kept.
    ("<dict><key></key><true/></dict>", .dictionary(["": .boolean(true)])),
    ("<dict><key/><true/></dict>", .dictionary(["": .boolean(true)])),
    ("<dict><key><!-- only a comment --></key><true/></dict>", .dictionary(["": .boolean(true)])),
    ("<dict><key><![CDATA[a<b]]></key><true/></dict>", .dictionary(["a<b": .boolean(true)])),
    ("<dict><key> k </key><true/></dict>", .dictionary([" k ": .boolean(true)])),
    // Comments and processing instructions are ignored everywhere.
    (
      "<!-- before --><?pi before?><plist><!-- in --><?pi in?><array><!-- x --><true/><?pi?></array>"
        + "<!-- after --></plist><!-- end -->",
      .array([.boolean(true)])
    ),
    // Data.
    ("<data/>", .data(Data())),
    ("<data></data>", .data(Data())),
    ("<data>  \n\t </data>", .data(Data())),
    ("<data>SGVsbG8=</data>", .data(Data("Hello".utf8))),
    ("<data>SGVsbG8h</data>", .data(Data("Hello!".utf8))),
    ("<data>SGVsbA==</data>", .data(Data("Hell".utf8))),
    ("<data>\n\tSG Vs\r\n bG8 =\n</data>", .data(Data("Hello".utf8))),
    // Unpadded final groups are decoded (CoreFoundation drops them silently).
    ("<data>SGVsbA</data>", .data(Data("Hell".utf8))),
    ("<data>SGVsbG8</data>", .data(Data("Hello".utf8))),
    ("<data>+/+/</data>", .data(Data([0xFB, 0xFF, 0xBF]))),
    // Integers.
    ("<integer>0</integer>", integer(0)),
    ("<integer>42</integer>", integer(42)),
    ("<integer> \n 42 \t</integer>", integer(42)),
    ("<integer>+42</integer>", integer(42)),
    ("<integer>-42</integer>", integer(-42)),
    ("<integer>-0</integer>", integer(0)),
    ("<integer>007</integer>", integer(7)),
    // CoreFoundation allows whitespace between the sign and the digits.
    ("<integer>- 5</integer>", integer(-5)),
    ("<integer>0x1F</integer>", integer(31)),
    ("<integer>0X1f</integer>", integer(31)),
    ("<integer>-0x10</integer>", integer(-16)),
    // libplist's hex.plist.
    ("<integer>0x73709551615</integer>", integer(0x737_0955_1615)),
    ("<integer>9223372036854775807</integer>", integer(.max)),
    ("<integer>-9223372036854775808</integer>", integer(.min)),
    ("<integer>-0x8000000000000000</integer>", integer(.min)),
    ("<integer>9223372036854775808</integer>", .integer(PropertyListInteger(UInt64(1) << 63))),
    ("<integer>18446744073709551615</integer>", .integer(PropertyListInteger(UInt64.max))),
    ("<integer>0xFFFFFFFFFFFFFFFF</integer>", .integer(PropertyListInteger(UInt64.max))),
    // Reals.
    ("<real>0</real>", real(0)),
    ("<real>1.5</real>", real(1.5)),
    ("<real> -2.5e3 </real>", real(-2500)),
    ("<real>+.5</real>", real(0.5)),
    ("<real>5.</real>", real(5)),
    ("<real>1E-3</real>", real(0.001)),
    ("<real>0.10000000000000001</real>", real(0.1)),
    ("<real>1e400</real>", real(.infinity)),
    ("<real>nan</real>", real(.nan)),
    ("<real>NaN</real>", real(.nan)),
    ("<real>inf</real>", real(.infinity)),
    ("<real>+inf</real>", real(.infinity)),
    ("<real>-INF</real>", real(-.infinity)),
    ("<real>infinity</real>", real(.infinity)),
    ("<real>+infinity</real>", real(.infinity)),
    ("<real>-Infinity</real>", real(-.infinity)),
    ("<real> -infinity\n</real>", real(-.infinity)),
    // Dates.
    ("<date>2001-01-01T00:00:00Z</date>", date(0)),
    ("<date>1970-01-01T00:00:00Z</date>", date(-978_307_200)),
    ("<date>2024-02-29T23:59:59Z</date>", date(730_943_999)),
    ("<date>0001-01-01T00:00:00Z</date>", date(XMLDate.earliest)),
    ("<date>9999-12-31T23:59:59Z</date>", date(XMLDate.endOfYear9999 - 1)),
    // UIDs: a dictionary whose only key is CF$UID with an integer value.
    ("<dict><key>CF$UID</key><integer>7</integer></dict>", .uid(7)),
    ("<dict><key>CF$UID</key><integer>0</integer></dict>", .uid(0)),
    ("<dict><key>CF$UID</key><integer>4294967295</integer></dict>", .uid(4_294_967_295)),
    (
      "<dict><key>CF$UID</key><integer>1</integer><key>CF$UID</key><integer>2</integer></dict>",
      .uid(2)
    ),
    (
      "<dict><key>CF$UID</key><string>7</string></dict>",
      .dictionary(["CF$UID": .string("7")])
    ),
    (
      "<dict><key>CF$UID</key><integer>7</integer><key>x</key><true/></dict>",
      .dictionary(["CF$UID": integer(7), "x": .boolean(true)])
    ),
    ("<dict><key>cf$uid</key><integer>7</integer></dict>", .dictionary(["cf$uid": integer(7)])),
    // Duplicate keys: the last value wins.
    (
      "<dict><key>a</key><integer>1</integer><key>b</key><integer>2</integer>"
        + "<key>a</key><integer>3</integer></dict>",
      .dictionary(["a": integer(3), "b": integer(2)])
    ),
    // A plain DOCTYPE naming any DTD is accepted and never fetched.
    ("<!DOCTYPE plist SYSTEM \"http://127.0.0.1:9/x.dtd\"><plist><true/></plist>", .boolean(true)),
    ("<!DOCTYPE anything><true/>", .boolean(true)),
    // Attributes are ignored, including prefixed ones with no namespace declaration.
    ("<plist a=\"1\" z:b=\"2\"><string q=\"x\">s</string></plist>", .string("s")),
    // Encodings libxml2 knows are converted.
    ("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><string>abc</string>", .string("abc")),
  ]

  @Test("reads values", arguments: values)
  func readsValues(_ input: String, _ expected: PropertyListValue) throws {
    #expect(try readXML(input) == expected)
  }

  @Test func duplicateKeysKeepFirstPositionWithLastValue() throws {
    let value = try readXML(
      plist(
        """
        <dict>
          <key>z</key><integer>1</integer>
          <key>y</key><integer>2</integer>
          <key>z</key><integer>3</integer>
        </dict>
        """))
    let dictionary = try #require(value.dictionaryValue)
    #expect(dictionary.keys == ["z", "y"])
    #expect(dictionary["z"] == integer(3))
  }

  @Test("Several duplicates among later keys fold, each to its first key's place")
  func interleavedDuplicateKeys() throws {
    let keys = ["a", "b", "a", "c", "b", "a", "d", "c"]
    var body = "<dict>"
    for (index, key) in keys.enumerated() { body += "<key>\(key)</key><integer>\(index)</integer>" }
    body += "</dict>"
    let dictionary = try #require(try readXML(body).dictionaryValue)
    #expect(dictionary.keys == ["a", "b", "c", "d"])
    #expect(dictionary.map(\.value) == [integer(5), integer(4), integer(7), integer(6)])
  }

  @Test func largeDictionaryWithDuplicates() throws {
    var body = "<dict>"
    for index in 0..<100 { body += "<key>k\(index % 50)</key><integer>\(index)</integer>" }
    body += "</dict>"
    let dictionary = try #require(try readXML(body).dictionaryValue)
    #expect(dictionary.count == 50)
    #expect(dictionary.keys == (0..<50).map { "k\($0)" })
    #expect(dictionary["k7"] == integer(57))
  }

  @Test func utf16WithByteOrderMark() throws {
    let text =
      "<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n<plist><string>\u{E9}\u{1F600}</string></plist>"
    var bytes: [UInt8] = [0xFF, 0xFE]
    for unit in text.utf16 { bytes += [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
    #expect(try XMLPropertyListReader().read(Data(bytes)) == .string("\u{E9}\u{1F600}"))
  }

  @Test func largeDataSpanningManyParserChunks() throws {
    var generator = SeededGenerator(seed: 7)
    let bytes = (0..<300_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
    let base64 = Data(bytes).base64EncodedString(options: [.lineLength76Characters])
    let value = try readXML(plist("<data>\n\(base64)\n</data>"))
    #expect(value == .data(Data(bytes)))
  }

  @Test func largeStringSpanningManyParserChunks() throws {
    let text = String(repeating: "abc \u{E9}\u{1F600} &<>\n", count: 20_000)
    let escaped = text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(
      of: "<", with: "&lt;")
    #expect(try readXML(plist("<string>\(escaped)</string>")) == .string(text))
  }

  // MARK: Errors

  struct ErrorCase: Sendable, CustomTestStringConvertible {
    var name: String
    var input: String
    var code: PropertyListError.Code
    var line: Int
    /// Text the message must contain.
    var message: String
    var testDescription: String { name }
  }

  static let errors: [ErrorCase] = [
    ErrorCase(
      name: "unclosed tag", input: "<plist>\n<dict>\n<key>a</key>\n<string>x</string>\n</plist>\n",
      code: .malformed, line: 5, message: "Opening and ending tag mismatch: dict line 2 and plist"),
    ErrorCase(
      name: "document ends inside an element", input: "<plist>\n<array>\n<true/>\n",
      code: .malformed, line: 4,
      message: "the input ends inside <array>, opened at line 2: a file cut short?"),
    ErrorCase(
      name: "&amp without semicolon",
      input: "<plist>\n<array>\n<string>a &amp b</string>\n</array>",
      code: .malformed, line: 3, message: "EntityRef: expecting ';'"),
    ErrorCase(
      name: "unknown encoding",
      input: "<?xml version=\"1.0\" encoding=\"foobar\"?>\n<plist><true/></plist>",
      code: .malformed, line: 1, message: "Unsupported encoding foobar"),
    ErrorCase(
      name: "trailing garbage after </plist>", input: "<plist><true/></plist>\ngarbage\n",
      code: .malformed, line: 2, message: "Extra content at the end of the document"),
    ErrorCase(
      name: "empty document", input: "", code: .malformed, line: 1, message: "Document is empty"),
    ErrorCase(
      name: "only whitespace", input: " \n", code: .malformed, line: 2, message: "not well-formed"),
    ErrorCase(
      name: "unknown element", input: "<plist>\n<array>\n<foo/>\n</array></plist>",
      code: .malformed, line: 3, message: "unknown element <foo>"),
    ErrorCase(
      name: "unknown root element", input: "<html/>", code: .malformed, line: 1,
      message: "unknown element <html>"),
    ErrorCase(
      name: "prefixed element", input: "<plist xmlns:x=\"urn:x\">\n<x:dict/></plist>",
      code: .malformed, line: 2, message: "unknown element <x:dict>"),
    ErrorCase(
      name: "element inside a string", input: "<plist>\n<string>a<b/>c</string></plist>",
      code: .malformed, line: 2, message: "unexpected element <b> inside <string>"),
    ErrorCase(
      name: "value inside a key", input: "<dict>\n<key><string/></key></dict>",
      code: .malformed, line: 2, message: "unexpected element <string> inside <key>"),
    ErrorCase(
      name: "text inside <true>", input: "<plist>\n<true>yes</true></plist>",
      code: .malformed, line: 2, message: "<true> must be empty"),
    ErrorCase(
      name: "whitespace inside <false>", input: "<plist>\n<false> </false></plist>",
      code: .malformed, line: 2, message: "<false> must be empty"),
    ErrorCase(
      name: "text between values", input: "<plist>\n<array>\n<true/> x\n</array></plist>",
      code: .malformed, line: 3, message: "unexpected text \"x\" in <array>"),
    ErrorCase(
      name: "text at plist top level", input: "<plist>\nhello<true/></plist>",
      code: .malformed, line: 2, message: "unexpected text \"hello\" in <plist>"),
    ErrorCase(
      name: "text in a dict", input: "<dict>\n<key>a</key>oops<true/></dict>",
      code: .malformed, line: 2, message: "unexpected text \"oops\" in <dict>"),
    ErrorCase(
      name: "key without value", input: "<plist>\n<dict>\n<key>a</key>\n</dict>\n</plist>",
      code: .malformed, line: 4, message: "key \"a\" in <dict> has no value"),
    ErrorCase(
      name: "two keys in a row", input: "<dict>\n<key>a</key>\n<key>b</key><true/></dict>",
      code: .malformed, line: 3, message: "key \"a\" in <dict> has no value"),
    ErrorCase(
      name: "value without key", input: "<dict>\n<string>a</string></dict>",
      code: .malformed, line: 2, message: "expected <key> in <dict>, found <string>"),
    ErrorCase(
      name: "key in an array", input: "<array>\n<key>a</key></array>",
      code: .malformed, line: 2, message: "<key> outside a <dict>"),
    ErrorCase(
      name: "key at the root", input: "<key>a</key>", code: .malformed, line: 1,
      message: "<key> outside a <dict>"),
    ErrorCase(
      name: "two values in plist", input: "<plist>\n<true/>\n<false/>\n</plist>",
      code: .malformed, line: 3, message: "<plist> holds only one value"),
    ErrorCase(
      name: "empty plist", input: "<plist>\n</plist>", code: .malformed, line: 2,
      message: "empty <plist>"),
    ErrorCase(
      name: "empty plist tag", input: "<plist/>", code: .malformed, line: 1,
      message: "empty <plist>"),
    ErrorCase(
      name: "nested plist", input: "<plist>\n<array><plist/></array></plist>",
      code: .malformed, line: 2, message: "unexpected <plist> inside <array>"),
    ErrorCase(
      name: "bad integer", input: "<plist>\n<array>\n<integer>12a</integer></array></plist>",
      code: .invalidValue, line: 3, message: "invalid <integer> \"12a\""),
    ErrorCase(
      name: "empty integer", input: "<plist>\n<integer> </integer></plist>",
      code: .invalidValue, line: 2, message: "empty <integer>"),
    ErrorCase(
      name: "integer tag", input: "<integer/>", code: .invalidValue, line: 1,
      message: "empty <integer>"),
    ErrorCase(
      name: "bare hex prefix", input: "<integer>0x</integer>", code: .invalidValue, line: 1,
      message: "invalid <integer>"),
    ErrorCase(
      name: "integer with inner space", input: "<integer>1 2</integer>", code: .invalidValue,
      line: 1, message: "invalid <integer>"),
    ErrorCase(
      name: "real in integer", input: "<integer>1.5</integer>", code: .invalidValue, line: 1,
      message: "invalid <integer>"),
    ErrorCase(
      name: "integer above UInt64.max", input: "<integer>18446744073709551616</integer>",
      code: .invalidValue, line: 1, message: "outside the 64-bit range"),
    ErrorCase(
      name: "integer below Int64.min", input: "<integer>-9223372036854775809</integer>",
      code: .invalidValue, line: 1, message: "outside the 64-bit range"),
    ErrorCase(
      name: "bad real", input: "<plist>\n<real>1.5x</real></plist>", code: .invalidValue,
      line: 2, message: "invalid <real> \"1.5x\""),
    ErrorCase(
      name: "hex real", input: "<real>0x1p3</real>", code: .invalidValue, line: 1,
      message: "invalid <real>"),
    ErrorCase(
      name: "empty real", input: "<real/>", code: .invalidValue, line: 1, message: "empty <real>"),
    ErrorCase(
      name: "nan with sign", input: "<real>-nan</real>", code: .invalidValue, line: 1,
      message: "invalid <real>"),
    ErrorCase(
      name: "bad date month", input: "<plist>\n\n<date>2001-13-01T00:00:00Z</date></plist>",
      code: .invalidValue, line: 3, message: "invalid <date> \"2001-13-01T00:00:00Z\""),
    ErrorCase(
      name: "date without T", input: "<date>2001-01-01 00:00:00Z</date>", code: .invalidValue,
      line: 1, message: "invalid <date>"),
    ErrorCase(
      name: "date year zero", input: "<date>0000-01-01T00:00:00Z</date>", code: .invalidValue,
      line: 1, message: "invalid <date>"),
    ErrorCase(
      name: "date not in leap year", input: "<date>2001-02-29T00:00:00Z</date>",
      code: .invalidValue, line: 1, message: "invalid <date>"),
    ErrorCase(
      name: "date with fraction", input: "<date>2001-01-01T00:00:00.5Z</date>",
      code: .invalidValue, line: 1, message: "invalid <date>"),
    ErrorCase(
      name: "date with surrounding space", input: "<date> 2001-01-01T00:00:00Z</date>",
      code: .invalidValue, line: 1, message: "invalid <date>"),
    ErrorCase(
      name: "empty date", input: "<date/>", code: .invalidValue, line: 1,
      message: "invalid <date>"),
    ErrorCase(
      name: "bad base64 character", input: "<plist>\n<data>\nSGV$\n</data></plist>",
      code: .invalidValue, line: 2, message: "invalid character '$'"),
    ErrorCase(
      name: "base64 after padding", input: "<data>SGk=SGk=</data>", code: .invalidValue, line: 1,
      message: "characters after '=' padding"),
    ErrorCase(
      name: "base64 padding only", input: "<data>====</data>", code: .invalidValue, line: 1,
      message: "misplaced '=' padding"),
    ErrorCase(
      name: "base64 too much padding", input: "<data>SGk==</data>", code: .invalidValue, line: 1,
      message: "misplaced '=' padding"),
    ErrorCase(
      name: "base64 lone final character", input: "<data>SGVsb</data>", code: .invalidValue,
      line: 1, message: "a lone final character"),
    ErrorCase(
      name: "base64 non-ASCII", input: "<data>SG\u{E9}</data>", code: .invalidValue, line: 1,
      message: "invalid byte 0xC3"),
    ErrorCase(
      name: "CF$UID negative",
      input: "<plist>\n<dict><key>CF$UID</key><integer>-1</integer></dict>",
      code: .invalidValue, line: 2, message: "CF$UID -1 is outside 0...4294967295"),
    ErrorCase(
      name: "CF$UID above UInt32",
      input: "<dict><key>CF$UID</key><integer>4294967296</integer></dict>",
      code: .invalidValue, line: 1, message: "CF$UID 4294967296 is outside 0...4294967295"),
  ]

  @Test("reports errors with their line", arguments: errors)
  func reportsErrors(_ error: ErrorCase) throws {
    let thrown = try #require(readError(error.input))
    #expect(thrown.code == error.code)
    #expect(thrown.location == .line(error.line))
    #expect(thrown.message.contains(error.message), "\(thrown.message)")
  }

  @Test(
    "A document cut short says so, with the line it ends on; an error before its end does not",
    arguments: [
      (
        "<plist>\n<array>\n<true/>\n", 4,
        "the input ends inside <array>, opened at line 2: a file cut short?"
      ),
      ("<plist>\n<array", 2, "the input ends inside the start tag <array: a file cut short?"),
      // A name cut short is not reported as an unknown element.
      ("<plist>\n<array>\n<tr", 3, "the input ends inside the start tag <tr: a file cut short?"),
      ("<plist>\n<array>\n</arr", 3, "expected '>', where the input ends: a file cut short?"),
      ("<plist>\n<array>\n<tr/>\n", 3, "unknown element <tr>"),
      (
        "<plist>\n<dict>\n<key>a</key>\n<string>x</string>\n</plist>\n", 5,
        "Opening and ending tag mismatch: dict line 2 and plist"
      ),
    ])
  func cutShort(_ input: String, line: Int, message: String) throws {
    let thrown = try #require(readError(input))
    #expect(thrown.location == .line(line))
    #expect(
      thrown.message == (message.hasPrefix("unknown") ? "" : "not well-formed XML: ") + message)
  }

  @Test("A UTF-16 document cut short says so: the input's end is found through the encoder")
  func cutShortUTF16() throws {
    let text = "<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n<plist>\n<array>\n<string>abc"
    var bytes = Data([0xFE, 0xFF])
    for unit in text.utf16 { bytes.append(contentsOf: [UInt8(unit >> 8), UInt8(unit & 0xFF)]) }
    let thrown = try #require(readError(bytes))
    #expect(thrown.location == .line(4))
    #expect(
      thrown.message
        == "not well-formed XML: the input ends inside <string>, opened at line 4: a file cut short?"
    )
    // Whole, the same text reads.
    let whole = text + "</string>\n</array>\n</plist>\n"
    var wholeBytes = Data([0xFE, 0xFF])
    for unit in whole.utf16 {
      wholeBytes.append(contentsOf: [UInt8(unit >> 8), UInt8(unit & 0xFF)])
    }
    #expect(try XMLPropertyListReader().read(wholeBytes) == .array([.string("abc")]))
  }

  @Test func invalidUTF8OnLine3() throws {
    var bytes = Data("<plist>\n<array>\n<string>a".utf8)
    bytes.append(0xFF)
    bytes.append(contentsOf: Data("b</string>\n</array>\n</plist>\n".utf8))
    let error = try #require(readError(bytes))
    #expect(error.code == .malformed)
    #expect(error.location == .line(3))
    #expect(
      error.message
        == "not well-formed XML: Input is not proper UTF-8, indicate encoding; Bytes: 0xFF 0x62 0x3C 0x2F"
    )
  }

  @Test func truncatedUTF8SequenceInKey() throws {
    var bytes = Data("<dict>\n\n\n\n<key>".utf8)
    bytes.append(contentsOf: [0xE2, 0x82])
    bytes.append(contentsOf: Data("</key><true/></dict>".utf8))
    let error = try #require(readError(bytes))
    #expect(error.code == .malformed)
    #expect(error.location == .line(5))
  }

  // MARK: Hostile documents

  @Test func externalEntityNamingALocalFileIsRefused() throws {
    let marker = "MARKER-\(UUID().uuidString)"
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "xmlreader-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let secret = directory.appendingPathComponent("secret.txt")
    try Data(marker.utf8).write(to: secret)

    let documents = [
      // The classic XXE: a general entity in the internal subset.
      """
      <?xml version="1.0"?>
      <!DOCTYPE plist [
        <!ENTITY x SYSTEM "\(secret.absoluteString)">
      ]>
      <plist><string>&x;</string></plist>
      """,
      // A parameter entity pulling the file into the DTD.
      """
      <?xml version="1.0"?>
      <!DOCTYPE plist [<!ENTITY % p SYSTEM "\(secret.absoluteString)"> %p;]>
      <plist><string>x</string></plist>
      """,
      // The file as the external DTD, with an entity it might declare.
      """
      <?xml version="1.0"?>
      <!DOCTYPE plist SYSTEM "\(secret.absoluteString)">
      <plist><string>&x;</string></plist>
      """,
    ]
    for document in documents {
      let error = try #require(readError(document))
      #expect(error.code == .forbidden)
      #expect(!error.description.contains(marker))
    }
    // With the file as external DTD but no entity use, the document reads and the DTD is not loaded.
    let value = try readXML(
      "<!DOCTYPE plist SYSTEM \"\(secret.absoluteString)\">\n<plist><string>ok</string></plist>")
    #expect(value == .string("ok"))
  }

  @Test func internalSubsetIsRefused() throws {
    let error = try #require(readError("<?xml version=\"1.0\"?>\n<!DOCTYPE plist []>\n<plist/>"))
    #expect(error.code == .forbidden)
    #expect(error.location == .line(2))
    #expect(error.message == "a DOCTYPE internal subset is not allowed (it could declare entities)")
  }

  /// Refused at the DOCTYPE's line, before any entity could be expanded (no timing asserted: the
  /// benchmark, not the tests, measures time).
  @Test func billionLaughsIsRefusedAtTheDoctype() throws {
    var document = "<?xml version=\"1.0\"?>\n<!DOCTYPE plist [\n<!ENTITY lol \"lol\">\n"
    for level in 1...9 {
      let previous = level == 1 ? "lol" : "lol\(level - 1)"
      document +=
        "<!ENTITY lol\(level) \"" + String(repeating: "&\(previous);", count: 10) + "\">\n"
    }
    document += "]>\n<plist><string>&lol9;</string></plist>\n"
    let error = readError(document)
    #expect(error?.code == .forbidden)
    #expect(error?.location == .line(2))
  }

  @Test(
    "undeclared entities are refused",
    arguments: [
      ("<plist>\n<string>&foo;</string></plist>", 2),
      (plist("<string>&nbsp;</string>"), 4),
      ("<plist a=\"&foo;\"><true/></plist>", 1),
    ])
  func undeclaredEntity(_ input: String, _ line: Int) throws {
    let error = try #require(readError(input))
    #expect(error.code == .forbidden)
    #expect(error.location == .line(line))
    #expect(error.message.hasPrefix("entity reference &"))
  }

  // MARK: Limits

  @Test func depthLimit() throws {
    // Depth counts nested arrays and dictionaries; <plist> does not count.
    #expect(try readXML(nestedArrays(512)) != .boolean(false))
    let error = try #require(readError(nestedArrays(513)))
    #expect(error.code == .limitExceeded)
    #expect(error.location == .line(4))
    #expect(error.message == "arrays and dictionaries nested deeper than 512")

    var mixed = ""
    for level in 0..<3 { mixed += level % 2 == 0 ? "<dict><key>k</key>" : "<array>" }
    let limits = PropertyListLimits(maximumDepth: 2)
    #expect(
      readError(mixed + "<true/></dict></array></dict>", limits: limits)?.code == .limitExceeded)
    #expect(try readXML("<dict><key>k</key><array/></dict>", limits: limits) != .boolean(false))
  }

  @Test func depthBeyondLibXML2sCapIsALimitError() throws {
    let limits = PropertyListLimits(maximumDepth: 100_000)
    let error = try #require(readError(nestedArrays(5_000), limits: limits))
    #expect(error.code == .limitExceeded)
    #expect(error.message == "elements nested deeper than libxml2's cap of 4096")
    #expect(try readXML(nestedArrays(4_000), limits: limits) != .boolean(false))
  }

  @Test func inputSizeLimitHasNoLocation() throws {
    let error = try #require(
      readError("<string>12345</string>", limits: PropertyListLimits(maximumInputSize: 10)))
    #expect(error.code == .limitExceeded)
    #expect(error.location == .none)
  }

  @Test func objectCountLimit() throws {
    let limits = PropertyListLimits(maximumObjectCount: 4)
    // array + key + true + string = 4 values and keys.
    #expect(
      try readXML("<array><dict><key>a</key><true/></dict></array>", limits: limits)
        == .array([.dictionary(["a": .boolean(true)])]))
    let error = try #require(
      readError("<array>\n<true/>\n<true/>\n<true/>\n<true/>\n</array>", limits: limits))
    #expect(error.code == .limitExceeded)
    #expect(error.location == .line(5))
  }

  @Test func valueLengthLimit() throws {
    let limits = PropertyListLimits(maximumValueLength: 4)
    #expect(try readXML("<string>abcd</string>", limits: limits) == .string("abcd"))
    #expect(readError("<string>abcde</string>", limits: limits)?.code == .limitExceeded)
    #expect(
      readError("<dict><key>abcde</key><true/></dict>", limits: limits)?.code == .limitExceeded)
    #expect(try readXML("<data>AAAAAA==</data>", limits: limits) == .data(Data(count: 4)))
    #expect(readError("<data>AAAAAAA=</data>", limits: limits)?.code == .limitExceeded)
    // Whitespace in base64 does not count; decoded bytes do.
    #expect(
      try readXML("<data>\n  AAAA\n  AA==\n</data>", limits: limits) == .data(Data(count: 4)))
  }

  // MARK: Concurrency

  @Test func concurrentReadsAreIndependent() async throws {
    let good = plist(
      "<dict><key>a</key><array><integer>1</integer><data>AAEC</data></array></dict>")
    let bad = "<plist>\n\n<integer>x</integer></plist>"
    let outcomes = await withTaskGroup(of: Bool.self) { group in
      for index in 0..<64 {
        group.addTask {
          if index.isMultiple(of: 2) {
            return (try? readXML(good))
              == .dictionary(["a": .array([integer(1), .data(Data([0, 1, 2]))])])
          }
          let error = readError(bad)
          return error?.location == .line(3) && error?.code == .invalidValue
        }
      }
      var all: [Bool] = []
      for await outcome in group { all.append(outcome) }
      return all
    }
    #expect(outcomes.count == 64)
    #expect(outcomes.allSatisfy { $0 })
  }

  // MARK: go-plist's unusual cases

  enum UnusualOutcome: Sendable {
    case value(PropertyListValue)
    case error(PropertyListError.Code, line: Int)
  }

  static let unusualCases: [(String, UnusualOutcome)] = [
    // &#169; is ©. Apple: the same.
    ("s01.plist", .value(.dictionary(["copyright": .string("\u{A9}")]))),
    // Whitespace before '>' in an end tag is legal XML. Apple: the same.
    ("s02.plist", .value(.dictionary(["name": .string("value")]))),
    // Empty key. Apple: the same.
    ("s03.plist", .value(.dictionary(["": .string("value")]))),
    // A comment-only key is the empty key. Apple's scanner refuses "<!" inside a key that does not
    // start a CDATA section, so it rejects this file.
    ("s04.plist", .value(.dictionary(["": .string("value")]))),
    // "<!test>" is not XML. Apple and libplist also reject it.
    ("s05.plist", .error(.malformed, line: 3)),
    // "&amp" without ';'. Apple ("unknown ampersand-escape") and libplist also reject it.
    ("s06.plist", .error(.malformed, line: 3)),
    // Unterminated attribute quote. Apple skips to the first '>' and reads {test: value}.
    ("s07.plist", .error(.malformed, line: 2)),
    // Text after </plist>. Apple stops after the root element and reads {test: value}.
    ("s08.plist", .error(.malformed, line: 7)),
    // Unterminated quote in the DOCTYPE. Apple skips to the first '>' and reads {test: value}.
    ("s09.plist", .error(.malformed, line: 1)),
    // `<string =">` is not XML. Apple skips to the first '>' and reads {test: apple}.
    ("s10.plist", .error(.malformed, line: 4)),
    // '>' inside a quoted attribute is legal, so the third key is "test" and the last value wins.
    // Apple ends the tag at that '>' and reads {test: apple, "\">test": libplist}.
    ("s11.plist", .value(.dictionary(["test": .string("libplist")]))),
  ]

  // Skipped, with the reason in the test's name, when ../shared/peer-suites is not beside the package.
  @Test(
    "go-plist xml_unusual_cases (needs ../shared/peer-suites)", .enabled(if: peerSuitesPresent),
    arguments: unusualCases)
  func goPlistUnusualCase(_ file: String, _ outcome: UnusualOutcome) throws {
    let url = peerSuites.appendingPathComponent("go-plist/testdata/xml_unusual_cases/" + file)
    let bytes = try Data(contentsOf: url)
    switch outcome {
    case .value(let expected):
      #expect(try XMLPropertyListReader().read(bytes) == expected)
    case .error(let code, let line):
      let error = try #require(readError(bytes))
      #expect(error.code == code)
      #expect(error.location == .line(line))
    }
  }

  @Test("every go-plist unusual case has an expectation", .enabled(if: peerSuitesPresent))
  func goPlistUnusualCasesAreCovered() throws {
    let directory = peerSuites.appendingPathComponent("go-plist/testdata/xml_unusual_cases")
    let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
      .filter { $0.hasSuffix(".plist") }.sorted()
    #expect(files == Self.unusualCases.map(\.0))
  }
}

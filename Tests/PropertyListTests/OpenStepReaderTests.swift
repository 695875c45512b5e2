import Foundation
import PropertyList
import TestSupport
import Testing

/// An OpenStep input and what CoreFoundation's reader (CFOldStylePList.c, as swift-corelibs-
/// foundation and swift-foundation ship it) makes of it: the value, or a refusal, with the line
/// and column we report.
struct OpenStepCase: Sendable, CustomTestStringConvertible {
  let text: String
  let expected: Result<PropertyListValue, ExpectedOpenStepError>
  var testDescription: String { text.debugDescription }

  init(_ text: String, _ value: PropertyListValue) {
    self.text = text
    expected = .success(value)
  }

  init(
    _ text: String, refused code: PropertyListError.Code, at line: Int, _ column: Int,
    _ message: String
  ) {
    self.text = text
    expected = .failure(
      ExpectedOpenStepError(code: code, line: line, column: column, message: message))
  }
}

struct ExpectedOpenStepError: Error, Sendable, Equatable {
  let code: PropertyListError.Code
  let line: Int
  let column: Int
  let message: String
}

private func dict(_ pairs: (String, PropertyListValue)...) -> PropertyListValue {
  .dictionary(PropertyListDictionary(pairs))
}

/// What CoreFoundation accepts: every kind of value, every escape, comments, `.strings` files.
let openStepAccepted: [OpenStepCase] = [
  OpenStepCase("hello", .string("hello")),
  OpenStepCase("42", .string("42")),
  OpenStepCase("-0.25", .string("-0.25")),
  OpenStepCase("a/b:c.d-e_f$g", .string("a/b:c.d-e_f$g")),
  OpenStepCase("a//b", .string("a//b")),
  OpenStepCase("\"quoted string\"", .string("quoted string")),
  OpenStepCase("'single'", .string("single")),
  OpenStepCase("\"it's\"", .string("it's")),
  OpenStepCase("'say \"hi\"'", .string("say \"hi\"")),
  OpenStepCase("\"\"", .string("")),
  OpenStepCase(#""\a\b\f\n\r\t\v""#, .string("\u{7}\u{8}\u{c}\n\r\t\u{b}")),
  OpenStepCase(#""\"\\\'\q""#, .string("\"\\'q")),
  OpenStepCase("\"a\\\nb\"", .string("a\nb")),
  OpenStepCase(#""\101\102\103""#, .string("ABC")),
  OpenStepCase(#""\0""#, .string("\u{0}")),
  OpenStepCase(#""\12x""#, .string("\nx")),
  OpenStepCase(#""\1010""#, .string("A0")),
  // NeXTSTEP, not Latin-1: 0xE9 is Ø.
  OpenStepCase(#""\200\351\753""#, .string("\u{A0}\u{D8}\u{BA}")),
  OpenStepCase(#""\U00e9\U00E9""#, .string("éé")),
  OpenStepCase(#""\U1234 !""#, .string("\u{1234} !")),
  OpenStepCase(#""\U41z""#, .string("Az")),
  OpenStepCase(#""\Uz""#, .string("\u{0}z")),
  OpenStepCase(#""\Ud83d\Ude00""#, .string("😀")),
  OpenStepCase("\"日本語 🙂\"", .string("日本語 🙂")),
  OpenStepCase("<>", .data(Data())),
  OpenStepCase(
    "<0fbd7777 1C2735AE>", .data(Data([0x0F, 0xBD, 0x77, 0x77, 0x1C, 0x27, 0x35, 0xAE]))),
  OpenStepCase("< 01\n02\t03\r04 >", .data(Data([1, 2, 3, 4]))),
  OpenStepCase("()", .array([])),
  OpenStepCase("(a, b)", .array([.string("a"), .string("b")])),
  OpenStepCase("(a, b,)", .array([.string("a"), .string("b")])),
  OpenStepCase("((), {}, <>)", .array([.array([]), dict(), .data(Data())])),
  OpenStepCase("{}", dict()),
  OpenStepCase("{a = b;}", dict(("a", .string("b")))),
  OpenStepCase(
    "{ \"k 1\" = (x); 'k2' = {y = z;}; }",
    dict(("k 1", .array([.string("x")])), ("k2", dict(("y", .string("z")))))),
  OpenStepCase("{a = 1; a = 2; b = 3;}", dict(("a", .string("2")), ("b", .string("3")))),
  OpenStepCase("{a;}", dict(("a", .string("a")))),
  OpenStepCase("  \n\t", dict()),
  OpenStepCase("// only a comment", dict()),
  OpenStepCase("/* unended comment", dict()),
  OpenStepCase(
    "/* c */ { /* c */ a /* c */ = /* c */ b /* c */ ; // c\n } // c", dict(("a", .string("b")))),
  OpenStepCase("a = b;\nc = \"d\";", dict(("a", .string("b")), ("c", .string("d")))),
  OpenStepCase("\"a\" = \"b\"; /* note */ \"c\";", dict(("a", .string("b")), ("c", .string("c")))),
  OpenStepCase("\u{FEFF}{a = b;}", dict(("a", .string("b")))),
  OpenStepCase("{a = b;}\u{2028}", dict(("a", .string("b")))),
  OpenStepCase("/", .string("/")),
]

/// What CoreFoundation refuses (and what this reader refuses where CoreFoundation would lose
/// data), with the line and column of each error.
let openStepRefused: [OpenStepCase] = [
  OpenStepCase(
    "\"abc", refused: .truncated, at: 1, 1, "a quoted string that does not end (it starts here)"),
  OpenStepCase(
    "(a,\n \"b", refused: .truncated, at: 2, 2, "a quoted string that does not end (it starts here)"
  ),
  OpenStepCase(
    "\"ab\\", refused: .truncated, at: 1, 5, "the input ends after a backslash in a quoted string"),
  OpenStepCase("(a b)", refused: .malformed, at: 1, 4, "expected ',' or ')' in an array, not 'b'"),
  OpenStepCase("(a,,b)", refused: .malformed, at: 1, 4, "expected ',' or ')' in an array, not ','"),
  OpenStepCase("(,)", refused: .malformed, at: 1, 2, "expected ',' or ')' in an array, not ','"),
  OpenStepCase(
    "(a", refused: .truncated, at: 1, 3, "the input ends inside an array (expected ',' or ')')"),
  OpenStepCase(
    "{a = b}", refused: .malformed, at: 1, 7, "expected ';' after the value of \"a\", not '}'"),
  OpenStepCase(
    "{a b;}", refused: .malformed, at: 1, 4, "expected '=' or ';' after the key \"a\", not 'b'"),
  OpenStepCase(
    "{a = ;}", refused: .malformed, at: 1, 6, "unexpected ';' where a value was expected"),
  OpenStepCase(
    "{a = b;", refused: .truncated, at: 1, 8, "the input ends inside a dictionary (expected '}')"),
  OpenStepCase(
    "{(a) = b;}", refused: .malformed, at: 1, 2, "expected ';' or '}' in a dictionary, not '('"),
  OpenStepCase(
    "{;}", refused: .malformed, at: 1, 2, "expected ';' or '}' in a dictionary, not ';'"),
  OpenStepCase("{a =", refused: .truncated, at: 1, 5, "the input ends where a value was expected"),
  OpenStepCase(
    "<0>", refused: .malformed, at: 1, 3, "data of an odd number of hex digits ('>' after one)"),
  OpenStepCase(
    "<0 1>", refused: .malformed, at: 1, 3, "data of an odd number of hex digits (U+0020 after one)"
  ),
  OpenStepCase("<01", refused: .truncated, at: 1, 4, "the input ends inside data (expected '>')"),
  OpenStepCase(
    "<0g>", refused: .malformed, at: 1, 3, "data of an odd number of hex digits ('g' after one)"),
  OpenStepCase(
    "<01 // c\n>", refused: .malformed, at: 1, 5,
    "'/' in data, which holds only hex digits and spaces"),
  OpenStepCase(
    "<01\u{0B}02>", refused: .malformed, at: 1, 4,
    "U+000B in data, which holds only hex digits and spaces"),
  OpenStepCase(
    "<\u{141}0>", refused: .malformed, at: 1, 2,
    "'Ł' (U+0141) in data, which holds only hex digits and spaces"),
  OpenStepCase("{a = b;} c", refused: .malformed, at: 1, 10, "text after the property list"),
  OpenStepCase("(a) (b)", refused: .malformed, at: 1, 5, "text after the property list"),
  OpenStepCase(
    "a = b; }", refused: .malformed, at: 1, 8, "text after the last entry of a .strings file ('}')"),
  OpenStepCase(
    "a = b\nc = d;", refused: .malformed, at: 2, 1, "expected ';' after the value of \"a\", not 'c'"
  ),
  OpenStepCase("#", refused: .malformed, at: 1, 1, "unexpected '#' where a value was expected"),
  OpenStepCase(
    "\r\n\r\n  @", refused: .malformed, at: 3, 3, "unexpected '@' where a value was expected"),
  OpenStepCase(
    "\"é\" = x\r(", refused: .malformed, at: 2, 1, "expected ';' after the value of \"é\", not '('"),
  OpenStepCase(
    #""\Ud83d""#, refused: .invalidValue, at: 1, 1,
    "the quoted string starting here holds half a surrogate pair (a \\U escape of D800–DFFF without its other half)"
  ),
  OpenStepCase(
    #"("x", "\376")"#, refused: .invalidValue, at: 1, 8,
    "the octal escape \\376 names no character of the NeXTSTEP encoding (byte 0xfe)"),
  OpenStepCase(
    #""\777""#, refused: .invalidValue, at: 1, 2,
    "the octal escape \\777 names no character of the NeXTSTEP encoding (byte 0xff)"),
]

@Suite("OpenStep reader")
struct OpenStepReaderTests {
  @Test("Inputs CoreFoundation accepts read to its values", arguments: openStepAccepted)
  func accepted(_ example: OpenStepCase) throws {
    guard case .success(let expected) = example.expected else { return }
    let value = try OpenStepPropertyListReader().read(Data(example.text.utf8))
    #expect(value == expected)
  }

  @Test(
    "Inputs CoreFoundation refuses are refused at their line and column", arguments: openStepRefused
  )
  func refused(_ example: OpenStepCase) {
    guard case .failure(let expected) = example.expected else { return }
    do {
      let value = try OpenStepPropertyListReader().read(Data(example.text.utf8))
      Issue.record("read as \(value)")
    } catch let error as PropertyListError {
      #expect(
        ExpectedOpenStepError(
          code: error.code, line: Self.line(error), column: Self.column(error),
          message: error.message)
          == expected)
    } catch {
      Issue.record("\(error)")
    }
  }

  static func line(_ error: PropertyListError) -> Int {
    if case .lineColumn(let line, _) = error.location { return line }
    return -1
  }

  static func column(_ error: PropertyListError) -> Int {
    if case .lineColumn(_, let column) = error.location { return column }
    return -1
  }

  @Test("An empty input is refused; UTF-16 with a byte-order mark and UTF-8 with one are read")
  func encodings() throws {
    #expect(throws: PropertyListError(.unsupportedFormat, "input is empty", at: .offset(0))) {
      try OpenStepPropertyListReader().read(Data())
    }
    let text = "{ \"clé\" = (\"日本\", <01ff>); }"
    let expected = dict(("clé", .array([.string("日本"), .data(Data([1, 0xFF]))])))
    var big = Data([0xFE, 0xFF])
    var little = Data([0xFF, 0xFE])
    for unit in text.utf16 {
      big.append(contentsOf: [UInt8(unit >> 8), UInt8(unit & 0xFF)])
      little.append(contentsOf: [UInt8(unit & 0xFF), UInt8(unit >> 8)])
    }
    #expect(try OpenStepPropertyListReader().read(big) == expected)
    #expect(try OpenStepPropertyListReader().read(little) == expected)
    #expect(
      try OpenStepPropertyListReader().read(Data([0xEF, 0xBB, 0xBF]) + Data(text.utf8)) == expected)
    #expect(
      throws: PropertyListError(
        .invalidValue, "UTF-16 text of an odd number of bytes (5)", at: .offset(4))
    ) {
      try OpenStepPropertyListReader().read(Data([0xFE, 0xFF, 0, 0x61, 0]))
    }
    #expect(
      throws: PropertyListError(
        .invalidValue, "the text is not UTF-8 (byte 0xe9 at offset 8)",
        at: .lineColumn(line: 2, column: 7))
    ) {
      try OpenStepPropertyListReader().read(
        Data("{\n a = \"".utf8) + Data([0xE9, 0x22, 0x3B, 0x7D]))
    }
  }

  @Test("Limits: depth, object count, value length and input size")
  func limits() throws {
    let deep = String(repeating: "(", count: 513) + String(repeating: ")", count: 513)
    #expect(
      throws: PropertyListError(
        .limitExceeded, "arrays and dictionaries nested deeper than 512",
        at: .lineColumn(line: 1, column: 513))
    ) {
      try OpenStepPropertyListReader().read(Data(deep.utf8))
    }
    let fine = String(repeating: "(", count: 512) + String(repeating: ")", count: 512)
    _ = try OpenStepPropertyListReader().read(Data(fine.utf8))
    let small = PropertyListLimits(maximumObjectCount: 3, maximumValueLength: 4)
    #expect(
      throws: PropertyListError(
        .limitExceeded, "more than 3 values and keys", at: .lineColumn(line: 1, column: 8))
    ) {
      try OpenStepPropertyListReader(limits: small).read(Data("(a, b, c)".utf8))
    }
    #expect(
      throws: PropertyListError(
        .limitExceeded, "string longer than 4 bytes", at: .lineColumn(line: 1, column: 2))
    ) {
      try OpenStepPropertyListReader(limits: small).read(Data("(abcde)".utf8))
    }
    #expect(
      throws: PropertyListError(
        .limitExceeded, "data longer than 4 bytes", at: .lineColumn(line: 1, column: 12))
    ) {
      try OpenStepPropertyListReader(limits: small).read(Data("<0102030405>".utf8))
    }
    #expect(
      throws: PropertyListError(
        .limitExceeded, "input of 6 bytes exceeds the limit of 5 bytes")
    ) {
      try OpenStepPropertyListReader(limits: PropertyListLimits(maximumInputSize: 5)).read(
        Data("(abcd)".utf8))
    }
  }

  @Test("The writer lays a value out as -description does, and it reads back")
  func writer() throws {
    let value = dict(
      ("URL", .string("https://example.com/a b")),
      ("bytes", .integer(PropertyListInteger(1_048_576))),
      ("list", .array([.string("x"), .real(PropertyListReal(0.25)), .boolean(true)])),
      ("data", .data(Data([0x62, 0x70, 0x6C, 0x69, 0x73, 0x74]))), ("empty", .string("")),
      ("quote", .string("a\"b\\c\nd\u{1B}é")))
    let text = String(decoding: OpenStepPropertyListWriter().write(value), as: UTF8.self)
    #expect(
      text == """
        {
            URL = "https://example.com/a b";
            bytes = 1048576;
            list = (
                x,
                0.25,
                1
            );
            data = <62706c69 7374>;
            empty = "";
            quote = "a\\"b\\\\c\\nd\\U001bé";
        }

        """)
    let escaped = String(
      decoding: OpenStepPropertyListWriter(escapingNonASCII: true).write(.string("é🙂")),
      as: UTF8.self)
    #expect(escaped == "\"\\U00e9\\Ud83d\\Ude42\"\n")
    // A bare string would start a comment: quoted.
    for comment in ["//3", "/*x"] {
      let written = OpenStepPropertyListWriter().write(.string(comment))
      #expect(String(decoding: written, as: UTF8.self) == "\"\(comment)\"\n")
      #expect(try OpenStepPropertyListReader().read(written) == .string(comment))
    }
    #expect(try OpenStepPropertyListReader().read(Data(escaped.utf8)) == .string("é🙂"))
    let strings = dict(
      ("URL", .string("https://example.com/a b")), ("bytes", .string("1048576")),
      ("list", .array([.string("x"), .string("0.25"), .string("1")])),
      ("data", .data(Data([0x62, 0x70, 0x6C, 0x69, 0x73, 0x74]))), ("empty", .string("")),
      ("quote", .string("a\"b\\c\nd\u{1B}é")))
    #expect(try OpenStepPropertyListReader().read(Data(text.utf8)) == strings)
  }

  @Test("Format detection: OpenStep data is not XML, JSON is named")
  func detection() throws {
    #expect(PropertyListInputFormat.detect(Data("<0fbd 7777>".utf8)) == .openStep)
    #expect(PropertyListInputFormat.detect(Data("<abcd>".utf8)) == .openStep)
    #expect(PropertyListInputFormat.detect(Data("<dict/>".utf8)) == .xml)
    #expect(PropertyListInputFormat.detect(Data("<?xml version=\"1.0\"?>".utf8)) == .xml)
    #expect(PropertyListInputFormat.detect(Data("bplist00".utf8)) == .binary)
    #expect(PropertyListInputFormat.detect(Data("{a = b;}".utf8)) == .openStep)
    #expect(
      throws: PropertyListError(
        .unsupportedFormat,
        "input looks like JSON, which is not a property-list format this tool reads",
        at: .offset(0))
    ) {
      try PropertyListValue.decodeAnyFormat(Data("{\"a\": 1}".utf8))
    }
    // A colon in a bare key is OpenStep's, not JSON's; control characters are fine in quotes.
    #expect(
      try PropertyListValue.decodeAnyFormat(Data("{a:b = \"\u{1}\";}".utf8)).value
        == dict(("a:b", .string("\u{1}"))))
    #expect(
      throws: PropertyListError(
        .unsupportedFormat, "input is neither an XML nor a binary property list", at: .offset(0))
    ) {
      try PropertyListValue.decodeAnyFormat(Data([0x36, 0x15, 0x08, 0x25, 0xD4, 0x01]))
    }
    let (value, format) = try PropertyListValue.decodeAnyFormat(Data("<62706c69>".utf8))
    #expect(format == .openStep)
    #expect(value == .data(Data("bpli".utf8)))
  }
}

/// The peer suites' OpenStep files, read to the exact values CoreFoundation gives them (every
/// bare number a string).
@Suite(
  "OpenStep peer files",
  .enabled(if: peerSuitesPresent, "../shared/peer-suites is absent: peer conformance tests skipped")
)
struct OpenStepPeerTests {
  func read(_ path: String) throws -> PropertyListValue {
    try OpenStepPropertyListReader().read(
      try Data(contentsOf: peerSuites.appendingPathComponent(path)))
  }

  @Test("libplist's o1.ostep: nested arrays and dictionaries, numbers as strings")
  func o1() throws {
    func one(_ value: String) -> PropertyListValue { .array([.string(value)]) }
    let ones = PropertyListValue.array([one("1"), one("1"), one("1"), one("1")])
    let c = { (value: String) in dict(("c", .string(value))) }
    let expected = dict(
      ("test", .array([.string("1"), .string("1")])),
      (
        "foo",
        .array([
          one("-1337"), one("1"), one("1"), one("1"),
          .array([one("1"), one("1"), one("1"), one("1"), ones]),
        ])
      ),
      (
        "more",
        dict(
          ("a", .string("yo")),
          (
            "b",
            .array([
              c("0.25"),
              dict(
                ("a", .string("yo")),
                (
                  "b",
                  .array([
                    c("0.25"),
                    dict(("a", .string("yo")), ("b", .array([dict(("cd", .string("-0.25")))]))),
                  ])
                )),
            ])
          ))
      ))
    #expect(try read("libplist/test/data/o1.ostep") == expected)
  }

  @Test("libplist's o2.ostep: UTF-8 strings, escapes, a trailing comma")
  func o2() throws {
    let value = try read("libplist/test/data/o2.ostep")
    #expect(value["Some ASCII string"] == .string("Test ASCII String"))
    #expect(value["Some UTF8 strings"]?.arrayValue?.count == 9)
    #expect(value["Some UTF8 strings"]?.arrayValue?.first == .string("àéèçù"))
    #expect(value["Keys & \"entities\""] == .string("hello world & others <nodes> are fun!?'"))
    #expect(value["Some Int"] == .string("32434543632"))
    #expect(value["Some String with Unicode entity"] == .string("Yeah check this: \u{1234} !!!"))
    #expect(value.dictionaryValue?.count == 5)
  }

  @Test("libplist's o3.ostep: comments everywhere")
  func o3() throws {
    #expect(
      try read("libplist/test/data/o3.ostep")
        == .array([
          dict(("AFirstKey", .string("A First Value")), ("ASecondKey", .string("A Second Value"))),
          dict(
            ("CFirstKey", .string("C First Value")),
            ("CSecondKey", .string("C Second Corrected Value"))),
        ]))
  }

  @Test("libplist's test.strings: a .strings file, a bare value among quoted ones")
  func strings() throws {
    let value = try read("libplist/test/data/test.strings")
    #expect(value.dictionaryValue?.keys.prefix(4) == ["STRINGS_ENTRY", "FOO", "BAR", "ENTRY0"])
    #expect(value["BAR"] == .string("Foo"))
    #expect(value["ENTRY1"] == .string("日本語"))
    #expect(value.dictionaryValue?.count == 12)
  }

  @Test("rust-plist's ascii-*.plist and netnewswire.pbxproj")
  func rust() throws {
    #expect(
      try read("rust-plist/tests/data/ascii-sample.plist")
        == dict(
          ("KeyName1", .string("Value1")), ("AnotherKeyName", .string("Value2")),
          (
            "Something",
            .array([.string("ArrayItem1"), .string("ArrayItem2"), .string("ArrayItem3")])
          ),
          ("Key4", .string("0.10")),
          (
            "KeyFive",
            dict(
              ("Dictionary2Key1", .string("Something")), ("AnotherKey", .string("Somethingelse")))
          )))
    let animals = try read("rust-plist/tests/data/ascii-animals.plist")
    #expect(animals["AnimalSounds"]?["Lisa"] == .string("Why is the worm talking like a lamb?"))
    #expect(animals["AnimalColors"]?["pig"] == .string("pink"))
    let project = try read("rust-plist/tests/data/netnewswire.pbxproj")
    #expect(project["archiveVersion"] == .string("1"))
    #expect(project["objectVersion"] == .string("46"))
    #expect((project["objects"]?.dictionaryValue?.count ?? 0) > 1000)
  }
}

/// The OpenStep finds of the fuzzer (Tests/PropertyListTests/FuzzRegressions/openstep-*): each
/// reads to a value whose written text reads back equal, or is refused.
@Suite("OpenStep fuzz regressions")
struct OpenStepFuzzRegressionTests {
  @Test(
    "Each OpenStep find reads back from its written text, or is refused",
    arguments: fuzzRegressions.filter { $0.hasPrefix("openstep-") })
  func replay(name: String) throws {
    let data = try Data(
      contentsOf: repositoryRoot.appendingPathComponent("Tests/PropertyListTests/FuzzRegressions")
        .appendingPathComponent(name))
    let value: PropertyListValue
    do {
      value = try OpenStepPropertyListReader().read(data)
    } catch is PropertyListError {
      return
    }
    for escaping in [false, true] {
      let text = OpenStepPropertyListWriter(escapingNonASCII: escaping).write(value)
      let again = try OpenStepPropertyListReader().read(text)
      if case .array(let before) = value, case .array(let after) = again {
        for (index, pair) in zip(before, after).enumerated() where pair.0 != pair.1 {
          Issue.record("element \(index): \(pair.0) became \(pair.1)")
        }
      }
      #expect(again == value, "escaping: \(escaping)")
    }
  }
}

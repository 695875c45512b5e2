import Foundation
import PropertyList
import Testing

/// Foundation's PropertyListSerialization as the oracle for XML: random trees agree in both
/// directions, and Foundation's XML comes back byte for byte from our writer.
@Suite("XML codec against Foundation")
struct XMLDifferentialTests {
  /// XML keeps dates to the second and reals in 64 bits, so the trees hold only such values.
  @Test("Random trees agree with Foundation in both directions", arguments: 0..<20)
  func randomTreesAgree(batch: Int) throws {
    for seed in (batch * 100)..<(batch * 100 + 100) {
      var generator = TreeGenerator(seed: UInt64(seed) + 100_000, wholeSecondDates: true)
      let tree = generator.tree()
      let theirs = try PropertyListSerialization.data(
        fromPropertyList: foundationObject(tree), format: .xml, options: 0)
      #expect(
        try XMLPropertyListReader().read(theirs) == tree, "seed \(seed): ours reading Foundation's")
      let ours = try XMLPropertyListWriter().write(tree)
      let back = try PropertyListSerialization.propertyList(from: ours, options: [], format: nil)
      #expect(
        propertyListValue(fromFoundation: back) == tree, "seed \(seed): Foundation reading ours")
    }
  }

  @Test("Foundation-written XML re-encodes to the same bytes", arguments: 0..<10)
  func foundationBytesRoundTrip(batch: Int) throws {
    for seed in (batch * 100)..<(batch * 100 + 100) {
      var generator = TreeGenerator(seed: UInt64(seed) + 150_000, wholeSecondDates: true)
      let tree = generator.tree()
      let theirs = try PropertyListSerialization.data(
        fromPropertyList: foundationObject(tree), format: .xml, options: 0)
      #expect(
        try XMLPropertyListWriter().write(try XMLPropertyListReader().read(theirs)) == theirs,
        "seed \(seed)")
    }
  }

  @Test(
    "Values are written in CoreFoundation's XML layout",
    arguments: [
      (PropertyListValue.real(PropertyListReal(0.1)), "<real>0.10000000000000001</real>"),
      (.real(PropertyListReal(3.0)), "<real>3</real>"),
      (.real(PropertyListReal(Float(0.1))), "<real>0.10000000149011612</real>"),
      (.real(PropertyListReal(-Double.infinity)), "<real>-infinity</real>"),
      (.real(PropertyListReal(Double.nan)), "<real>nan</real>"),
      (.integer(PropertyListInteger(UInt64.max)), "<integer>18446744073709551615</integer>"),
      (.date(Date(timeIntervalSinceReferenceDate: 12_345.6)), "<date>2001-01-01T03:25:45Z</date>"),
      (.date(Date(timeIntervalSinceReferenceDate: -0.5)), "<date>2000-12-31T23:59:59Z</date>"),
      (.string("a<b>&\"'\tc\r"), "<string>a&lt;b&gt;&amp;\"'\tc&#13;</string>"),
      (.uid(7), "<dict>\n\t<key>CF$UID</key>\n\t<integer>7</integer>\n</dict>"),
      (.data(Data()), "<data>\n</data>"),
      (.array([]), "<array/>"),
      (.dictionary([:]), "<dict/>"),
    ])
  func layout(value: PropertyListValue, body: String) throws {
    let header = """
      <?xml version="1.0" encoding="UTF-8"?>
      <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
      <plist version="1.0">

      """
    #expect(
      String(decoding: try XMLPropertyListWriter().write(value), as: UTF8.self) == header + body
        + "\n</plist>\n")
  }

  @Test(
    "Integers and UIDs are written in decimal as Swift writes them, at both ends of their range",
    arguments: [
      (PropertyListValue.integer(PropertyListInteger(Int64.min)), "-9223372036854775808"),
      (.integer(PropertyListInteger(-10)), "-10"), (.integer(PropertyListInteger(-1)), "-1"),
      (.integer(PropertyListInteger(0)), "0"), (.integer(PropertyListInteger(9)), "9"),
      (.integer(PropertyListInteger(10)), "10"), (.integer(PropertyListInteger(99)), "99"),
      (.integer(PropertyListInteger(Int64.max)), "9223372036854775807"),
      (.integer(PropertyListInteger(UInt64.max)), "18446744073709551615"),
      (.uid(0), "0"), (.uid(4_294_967_295), "4294967295"),
    ])
  func integerText(value: PropertyListValue, text: String) throws {
    let xml = String(decoding: try XMLPropertyListWriter().write(value), as: UTF8.self)
    #expect(xml.contains("<integer>\(text)</integer>\n"), "\(xml)")
    #expect(try XMLPropertyListReader().read(Data(xml.utf8)) == value)
  }

  @Test("Base64 lines shrink by 8 columns a level, down to 12 at depth 8 and below")
  func base64Layout() throws {
    var value = PropertyListValue.data(Data(repeating: 0xAB, count: 100))
    var depth = 0
    while depth < 10 {
      let xml = String(decoding: try XMLPropertyListWriter().write(value), as: UTF8.self)
      let lines = xml.split(separator: "\n").filter { $0.hasSuffix("q6ur") || $0.hasSuffix("==") }
      let clamped = min(depth, 8)
      #expect(
        lines.first
          == Substring(
            String(repeating: "\t", count: clamped)
              + String(repeating: "q6ur", count: (76 - 8 * clamped) / 4)), "depth \(depth)")
      // Foundation agrees at every depth.
      let foundation = try PropertyListSerialization.data(
        fromPropertyList: foundationObject(value), format: .xml, options: 0)
      #expect(try XMLPropertyListWriter().write(value) == foundation, "depth \(depth)")
      value = .array([value])
      depth += 1
    }
  }

  @Test("Data of every length from 0 to 160 is written as Foundation writes it, at every depth")
  func base64EveryLength() throws {
    for length in 0...160 {
      let data = Data((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 193 &+ length &* 7) })
      var value = PropertyListValue.data(data)
      for depth in 0..<10 {
        let foundation = try PropertyListSerialization.data(
          fromPropertyList: foundationObject(value), format: .xml, options: 0)
        let ours = try XMLPropertyListWriter().write(value)
        #expect(ours == foundation, "length \(length), depth \(depth)")
        #expect(try XMLPropertyListReader().read(foundation) == value)
        value = .array([value])
      }
    }
  }

  @Test("Whitespace anywhere in base64 is skipped, as Foundation skips it")
  func base64Whitespace() throws {
    let data = Data((0..<40).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 5) })
    let text = Array(data.base64EncodedString().utf8)
    for position in 0...text.count {
      for space in ["\n", " ", "\t\t", "\r\n\t"] {
        let spaced = String(
          decoding: text[..<position] + Array(space.utf8) + text[position...], as: UTF8.self)
        let xml = Data(
          ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\">\n<data>"
            + spaced + "</data>\n</plist>\n").utf8)
        #expect(try XMLPropertyListReader().read(xml) == .data(data), "at \(position)")
        let foundation = try PropertyListSerialization.propertyList(from: xml, format: nil)
        #expect(foundation as? Data == data)
      }
    }
  }

  @Test("Characters XML cannot carry are refused, not written raw")
  func illegalCharacters() {
    for text in ["\u{1}", "a\u{1B}b", "\u{FFFE}", "\u{FFFF}"] {
      #expect(throws: PropertyListError.self) { try XMLPropertyListWriter().write(.string(text)) }
      #expect(throws: PropertyListError.self) {
        try XMLPropertyListWriter().write(.dictionary([text: .boolean(true)]))
      }
    }
  }

  @Test("Dates outside years 0001-9999 cannot be written in XML")
  func dateRange() {
    for seconds in [-63_113_904_001.0, 252_423_993_600, .infinity, .nan] {
      #expect(throws: PropertyListError.self) {
        try XMLPropertyListWriter().write(.date(Date(timeIntervalSinceReferenceDate: seconds)))
      }
    }
    #expect(throws: Never.self) {
      try XMLPropertyListWriter().write(
        .date(Date(timeIntervalSinceReferenceDate: -63_113_904_000)))
    }
  }
}

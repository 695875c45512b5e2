import CVectorLoops
import Foundation
import PropertyList
import Testing

/// The byte scans the writers copy text by and header fields are checked by (CVectorLoops, sixteen
/// bytes a step, or a byte at a time for tokens), against the rule each one states, byte by byte:
/// every byte value at every position of a step and of the tail.
@Suite("Byte scans")
struct ByteScanTests {
  // Each scan, and the bytes its rule picks.
  static let scans:
    [(
      name: String, scan: @Sendable (UnsafeRawBufferPointer) -> Bool,
      picks: @Sendable (UInt8) -> Bool, picksNoBytes: Bool
    )] = [
      ("JSON escapes", { jsonNeedsEscapes($0) }, { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }, false),
      (
        "XML escaping",
        {
          cvl_xml_needs_escaping($0.baseAddress?.assumingMemoryBound(to: UInt8.self), $0.count) != 0
        },
        { [0x3C, 0x3E, 0x26, 0x0D, 0xEF].contains($0) || ($0 < 0x20 && $0 != 0x09 && $0 != 0x0A) },
        false
      ),
      (
        "XML plain text (negated)", { !XMLPropertyListWriter.isPlainText($0) },
        { !((0x20..<0x7F).contains($0) || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D) }, false
      ),
      (
        "Line break or NUL", { holdsLineBreakOrNul($0) }, { [0x00, 0x0A, 0x0D].contains($0) }, false
      ),
      (
        // RFC 9110 §5.6.2: tchar is visible ASCII but the delimiters `"(),/:;<=>?@[\]{}`.
        "HTTP token (negated)", { !isHTTPToken($0) },
        { !(0x21..<0x7F).contains($0) || Array(#""(),/:;<=>?@[\]{}"#.utf8).contains($0) }, true
      ),
    ]

  @Test("Each scan finds every byte its rule picks, at every position", arguments: 0..<5)
  func everyByteAtEveryPosition(_ index: Int) {
    let (name, scan, picks, picksNoBytes) = Self.scans[index]
    // Lengths below a step, of one, two and a part, and 37 (two steps and a tail of five). The
    // filler is picked by no rule.
    for length in [1, 5, 15, 16, 17, 31, 32, 37] {
      for value in 0...255 {
        for position in 0..<length {
          var text = [UInt8](repeating: UInt8(ascii: "a"), count: length)
          text[position] = UInt8(value)
          let found = text.withUnsafeBytes { scan($0) }
          #expect(
            found == picks(UInt8(value)), "\(name): byte \(value) at \(position) of \(length)")
        }
      }
    }
    #expect(scan(UnsafeRawBufferPointer(start: nil, count: 0)) == picksNoBytes, "\(name): no bytes")
  }

  /// A header field's two checks made in one call give what the two give apart: a token name and
  /// a value without a line break or NUL, and nothing else.
  @Test(
    "A header field is sendable exactly when its name is a token and its value has no break",
    arguments: [
      ("Accept", "*/*", true), ("X-Request-ID", "", true), ("", "value", false),
      ("Bad Name", "value", false), ("Name:", "value", false), ("Cookie", "a=b\r\nX: y", false),
      ("Cookie", "a=b\n", false), ("User-Agent", "agent\u{0}", false),
      ("Authorization", String(repeating: "Bearer token ", count: 9), true),
      ("Authorization", String(repeating: "Bearer token ", count: 9) + "\r", false),
      ("n\u{E9}", "value", false), ("Name", "caf\u{E9}", true),
    ])
  func sendableHeaderField(name: String, value: String, sendable: Bool) {
    let apart =
      Array(name.utf8).withUnsafeBytes { isHTTPToken($0) }
      && !Array(value.utf8).withUnsafeBytes { holdsLineBreakOrNul($0) }
    let together = Array(name.utf8).withUnsafeBytes { name in
      Array(value.utf8).withUnsafeBytes { isSendableHeaderField(name: name, value: $0) }
    }
    #expect(apart == sendable)
    #expect(together == sendable)
  }
}

import Foundation
import PropertyList
import TestSupport
import Testing

@testable import ResumeDataBatch

/// The base64 encoder of result lines against Foundation's, whose output it replaces byte for byte.
@Suite("Batch base64 encoding")
struct BatchBase64Tests {
  /// The base64 of `data` as a result line gets it, alone (without its quotes).
  func encoded(_ data: Data) -> Data {
    var line = JSONLine(capacity: 0)
    line.base64(data)
    return line.finish().dropFirst().dropLast()
  }

  @Test("Every length from 0 to 300, of scrambled bytes, encodes as Foundation encodes it")
  func matchesFoundation() {
    for length in 0...300 {
      let data = scrambledBytes(length)
      #expect(encoded(data) == data.base64EncodedData(), "length \(length)")
    }
  }

  @Test("Encoding appends after what the line already holds, growing it from its least room")
  func encodeAppends() {
    for length in [0, 1, 2, 20, 47, 48, 49, 200] {
      let data = Data((0..<length).map { UInt8(truncatingIfNeeded: 255 &- $0 &* 13) })
      var line = JSONLine(capacity: 0)
      line.beginObject()
      line.key("blob")
      line.base64(data)
      line.endObject()
      #expect(
        line.finish()
          == Data("{\"blob\":\"".utf8) + data.base64EncodedData() + Data("\"}".utf8))
    }
  }

  @Test("Known vectors (RFC 4648, section 10)", arguments: base64Vectors)
  func vectors(plain: String, encoded: String) {
    #expect(self.encoded(Data(plain.utf8)) == Data(encoded.utf8))
  }

  @Test("Both characters past the alphabet's letters and digits")
  func lastCharacters() {
    #expect(encoded(Data([0xFB, 0xFF, 0xBF])) == Data("+/+/".utf8))
  }
}

/// The byte writer of `batch`'s result lines.
@Suite("Batch result lines")
struct JSONLineTests {
  @Test(
    "Strings are escaped as the library's JSON writer escapes them",
    arguments: [
      "", "plain", "say \"hi\"", "back\\slash", "line\nbreak\r\ttab", "\u{08}\u{0C}",
      "été 🚀 日本", "\"\\\"", String((0..<0x20).map { Character(Unicode.Scalar($0)) }),
      "\u{7F}\u{80}\u{FFFF}",
    ])
  func escaping(_ text: String) throws {
    var line = JSONLine(capacity: 0)
    line.string(text)
    var expected = ""
    appendJSONString(text, to: &expected)
    let written = line.finish()
    #expect(written == Data(expected.utf8))
    let decoded = try JSONSerialization.jsonObject(with: written, options: .fragmentsAllowed)
    #expect(decoded as? String == text)
  }

  @Test("The escape test finds any byte JSON escapes, wherever it stands, and nothing else")
  func escapeTest() {
    // Each byte value at each position of texts of 1 to 19 otherwise plain bytes.
    for length in 1..<20 {
      for position in 0..<length {
        for value in 0...255 {
          var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
          bytes[position] = UInt8(value)
          let expected = value < 0x20 || value == 0x22 || value == 0x5C
          let found = bytes.withUnsafeBytes { jsonNeedsEscapes($0) }
          #expect(found == expected, "byte \(value) at \(position) of \(length)")
        }
      }
    }
    #expect(!jsonNeedsEscapes(UnsafeRawBufferPointer(start: nil, count: 0)))
  }

  @Test(
    "Numbers are written as Swift writes them",
    arguments: [
      0, 1, -1, 9, 10, -10, 99, 100, 12_345, Int(Int32.max), Int.max, Int.min, Int.min + 1,
    ])
  func numbers(_ value: Int) {
    var line = JSONLine(capacity: 0)
    line.beginArray()
    line.number(value)
    line.number(value)
    line.endArray()
    #expect(String(decoding: line.finish(), as: UTF8.self) == "[\(value),\(value)]")
  }

  @Test("Commas go between fields and elements, never after an opening bracket or a key")
  func separators() {
    var line = JSONLine(capacity: 0)
    line.beginObject()
    line.key("a")
    line.number(-12)
    line.key("b")
    line.beginArray()
    line.beginObject()
    line.endObject()
    line.bool(nil)
    line.bool(true)
    line.string(nil)
    line.endArray()
    line.key("c")
    line.base64(Data("foobar".utf8))
    line.key("d")
    line.raw("{\"x\":1}")
    line.endObject()
    #expect(
      String(decoding: line.finish(), as: UTF8.self)
        == #"{"a":-12,"b":[{},null,true,null],"c":"Zm9vYmFy","d":{"x":1}}"#)
  }
}

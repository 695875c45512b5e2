import Foundation
import PropertyList
import TestSupport
import Testing

/// The strict one-line base64 decoder of batch records against Foundation's, and its two paths
/// (canonical text fast, anything else character by character) against each other, and the
/// encoder's group steps against Foundation's (its lengths: ResultLineTests).
@Suite("One-line base64")
struct Base64LineTests {
  @Test("Every length from 0 to 300 decodes back, as Foundation decodes it")
  func decodesAsFoundation() throws {
    for length in 0...300 {
      let data = scrambledBytes(length)
      let text = data.base64EncodedData()
      #expect(try Base64Groups.decode(text).get() == data, "length \(length)")
      #expect(Data(base64Encoded: text) == data)
    }
  }

  // Each group loop takes its word's high bits as an index: bytes with the top bit set, at each
  // position of a step of twelve, must not read as negative.
  @Test("The encoder writes Foundation's text for every byte value at every offset of a step")
  func encodesEveryByte() {
    for value in [0x00, 0x7F, 0x80, 0xFF] + Array(stride(from: 1, to: 256, by: 37)) {
      for offset in 0..<14 {
        var data = Data(repeating: 0xFF - UInt8(value), count: 26)
        data[offset] = UInt8(value)
        #expect(encoded(data) == data.base64EncodedData(), "byte \(value) at \(offset)")
      }
    }
  }

  private func encoded(_ data: Data) -> Data {
    var text = Data(count: Base64Groups.encodedCount(data.count))
    text.withUnsafeMutableBytes { out in
      data.withUnsafeBytes { Base64Groups.encode($0, into: out.baseAddress!) }
    }
    return text
  }

  @Test(
    "Text that is not strict base64 is refused at its first wrong character",
    arguments: [
      ("QU=D", 2, "'=' before the end"),
      ("QUJD====", 4, "more than two '='"),
      ("QUJD=", 5, "5 characters: not a multiple of four"),
      ("Q===", 1, "more than two '='"),
      ("QUJDQ===", 5, "more than two '='"),
      ("QUJ", 3, "3 characters: not a multiple of four"),
      ("QR==", 1, "the last character has bits set that the padding drops"),
      ("QUF=", 2, "the last character has bits set that the padding drops"),
      ("QUJD\nQUJD", 4, "a line break: a record's base64 is one line (base64 -w 0)"),
      ("QUJD QUJD", 4, "a space"),
      ("QU-D", 2, "'-' (base64url?)"),
      ("QU.D", 2, "'.', not a base64 character"),
      ("QU\u{7F}D", 2, "the byte 7F, not a base64 character"),
    ])
  func strict(_ text: String, offset: Int, message: String) {
    #expect(
      Base64Groups.decode(Data(text.utf8))
        == .failure(Base64Groups.DecodingError(offset: offset, message: message)))
  }

  @Test("The fast decoder takes every canonical text, to the strict decoder's bytes")
  func canonicalFastPath() throws {
    for length in 1...300 {
      let data = scrambledBytes(length, shift: 3)
      let text = data.base64EncodedData()
      let fast = text.withUnsafeBytes { Base64Groups.decodeCanonical($0) }
      #expect(fast == data, "length \(length)")
      #expect(try text.withUnsafeBytes { try Base64Groups.decodeStrictly($0).get() } == data)
    }
  }

  @Test(
    "One character replaced anywhere: decoding says what the strict decoder says",
    arguments: ["=", "-", " ", "\n", "\u{0}", "A", "/", "+", "g", "\u{7F}"].map { UInt8(ascii: $0) }
      + [0x80, 0xC3, 0xFF])
  func oneCharacterReplaced(_ replacement: UInt8) {
    for length in 1...36 {
      let data = Data((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 97 &+ length &* 31) })
      let text = [UInt8](data.base64EncodedData())
      for position in text.indices {
        var changed = text
        changed[position] = replacement
        let strict = changed.withUnsafeBytes { Base64Groups.decodeStrictly($0) }
        #expect(
          Base64Groups.decode(Data(changed)) == strict, "length \(length), at \(position)")
        let fast = changed.withUnsafeBytes { Base64Groups.decodeCanonical($0) }
        #expect(fast == (try? strict.get()), "length \(length), at \(position)")
      }
    }
  }

  @Test(
    "Decoding up to a quote gives what decoding the text before the first quote gives",
    arguments: ["\"", "=", "-", "\n", "A", "/", "\u{0}"].map { UInt8(ascii: $0) } + [0xC3])
  func upToQuote(_ replacement: UInt8) {
    let quote = UInt8(ascii: "\"")
    for length in 0...40 {
      let data = Data((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 89 &+ length &* 13) })
      // The text, its closing quote, and what may follow it in a line (more padding, a quote).
      let text = [UInt8](data.base64EncodedData()) + [quote] + Array("=\",\"id\":1}".utf8)
      for position in -1..<text.count {
        var changed = text
        if position >= 0 { changed[position] = replacement }
        let reference: (Data, Int)? = changed.withUnsafeBytes { bytes in
          guard let end = bytes.firstIndex(of: quote),
            let decoded = Base64Groups.decodeCanonical(
              UnsafeRawBufferPointer(rebasing: bytes[..<end]))
          else { return nil }
          return (decoded, end)
        }
        let merged: (Data, end: Int)? = changed.withUnsafeBytes { bytes in
          guard let (block, count, end) = Base64Groups.decodeCanonical(bytes, upTo: quote) else {
            return nil
          }
          return (ReusableBlocks.data(adopting: block, count: count), end)
        }
        #expect(
          merged?.0 == reference?.0,
          "length \(length), at \(position): \(String(decoding: changed, as: UTF8.self))")
        #expect(merged?.end == reference?.1, "length \(length), at \(position)")
      }
    }
  }

  @Test("Known vectors (RFC 4648, section 10)", arguments: base64Vectors)
  func vectors(plain: String, encoded: String) {
    #expect(Base64Groups.decode(Data(encoded.utf8)) == .success(Data(plain.utf8)))
  }

  @Test("Both characters past the alphabet's letters and digits")
  func lastCharacters() {
    #expect(Base64Groups.decode(Data("+/+/".utf8)) == .success(Data([0xFB, 0xFF, 0xBF])))
  }
}

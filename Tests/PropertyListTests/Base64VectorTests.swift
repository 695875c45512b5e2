import CVectorLoops
import Foundation
import PropertyList
import TestSupport
import Testing

/// Base64's vector loops (AVX2, in the CVectorLoops target) against its scalar loops and against
/// Foundation: the same characters for every byte at every offset of a block, and the same stop,
/// bytes and count for every byte at every position of a text.
@Suite("Base64 in vectors")
struct Base64VectorTests {
  @Test("The vector loops run where the processor has AVX2, unless the build or run turns them off")
  func vectorsWhereAVX2() throws {
    // Bit 1 of cvl_vector_paths: the vector paths were compiled in (not CVL_SCALAR_ONLY).
    let compiled = cvl_vector_paths() & 1 != 0
    let turnedOff = ProcessInfo.processInfo.environment["RESUMEDATA_NO_AVX2"] != nil
    #if arch(x86_64) && os(Linux)
      let cpuinfo = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
      let flags = cpuinfo.split(separator: "\n").first { $0.hasPrefix("flags") } ?? ""
      let expected = compiled && !turnedOff && flags.split(separator: " ").contains("avx2")
      #expect(Base64Groups.hasVectors == expected)
    #else
      #expect(!compiled)
      #expect(!Base64Groups.hasVectors)
    #endif
  }

  // CI runs the suite three ways and says which in RESUMEDATA_EXPECT_VECTORS, so that a switch
  // that stopped working fails here rather than testing the same paths three times.
  @Test("The run takes the vector paths CI asked for")
  func vectorPathsAsAsked() {
    let paths = cvl_vector_paths()
    #expect(Base64Groups.hasVectors == (paths & 2 != 0))
    switch ProcessInfo.processInfo.environment["RESUMEDATA_EXPECT_VECTORS"] {
    case nil: break
    case "scalar": #expect(paths == 0)
    case "sse2": #expect(paths == 1)
    case "avx2": #expect(paths == 3)
    case let other?: Issue.record("RESUMEDATA_EXPECT_VECTORS=\(other): not scalar, sse2 or avx2")
    }
  }

  @Test(
    "Encoding in vectors writes the scalar loops' and Foundation's text",
    arguments: [0, 1, 2, 3, 23, 24, 25, 26, 47, 48, 49, 71, 72, 73, 95, 96, 100, 1_000, 4_099])
  func encodesAsScalarAndFoundation(_ length: Int) {
    let data = scrambledBytes(length, shift: 7)
    let vector = encoded(data, vectors: true)
    #expect(vector == encoded(data, vectors: false))
    #expect(vector == data.base64EncodedData())
  }

  @Test("Every byte value at every offset of a block encodes as Foundation encodes it")
  func encodesEveryByteAtEveryOffset() {
    for value in 0..<256 {
      for offset in 0..<24 {
        var data = Data(repeating: UInt8(255 - value), count: 48)
        data[offset] = UInt8(value)
        data[24 + (offset * 7) % 24] = UInt8(value)
        let text = encoded(data, vectors: true)
        #expect(text == data.base64EncodedData(), "byte \(value) at \(offset)")
      }
    }
  }

  @Test("Decoding in vectors reads Foundation's bytes back", arguments: [32, 64, 96, 128, 4_096])
  func decodesAsFoundation(_ characters: Int) {
    let data = scrambledBytes(characters / 4 * 3, shift: 2)
    let text = data.base64EncodedData()
    let (read, written, bytes) = decoded(text, vectors: true)
    #expect(read == text.count)
    #expect(written == data.count)
    #expect(bytes == data)
  }

  // Each byte value, alphabet or not, at each position of three blocks, and of seven (a step of
  // four blocks, one of two and one alone): the vector check must take exactly the alphabet, and
  // stop where the scalar loops stop (the group holding the byte), having written the same bytes.
  @Test(
    "Every byte value at every position: the vector loops stop and write as the scalar ones",
    arguments: [72, 168])
  func everyByteAtEveryPosition(_ length: Int) {
    let data = scrambledBytes(length, shift: 3)
    let text = [UInt8](data.base64EncodedData())
    let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    for value in 0...255 {
      let byte = UInt8(value)
      for position in text.indices {
        var changed = text
        changed[position] = byte
        let vector = decoded(Data(changed), vectors: true)
        let scalar = decoded(Data(changed), vectors: false)
        #expect(vector.read == scalar.read, "byte \(value) at \(position)")
        #expect(vector.bytes == scalar.bytes, "byte \(value) at \(position)")
        #expect(vector.read == (alphabet.contains(byte) ? text.count : position / 4 * 4))
      }
    }
  }

  private func encoded(_ data: Data, vectors: Bool) -> Data {
    var text = Data(count: Base64Groups.encodedCount(data.count))
    text.withUnsafeMutableBytes { out in
      data.withUnsafeBytes { Base64Groups.encode($0, into: out.baseAddress!, vectors: vectors) }
    }
    return text
  }

  // The characters read, the bytes written, and those bytes.
  private func decoded(_ text: Data, vectors: Bool) -> (read: Int, written: Int, bytes: Data) {
    // Three bytes a group and one more, as the loops need; filled so that a stray write shows.
    var out = Data(repeating: 0xA5, count: text.count / 4 * 3 + 1)
    let (read, written) = out.withUnsafeMutableBytes { out in
      text.withUnsafeBytes {
        Base64Groups.decodeWholeGroups($0, into: out.baseAddress!, vectors: vectors)
      }
    }
    // Past the bytes decoded, and the one byte more the scalar loops may store, nothing changed.
    #expect(out.dropFirst(written + 1).allSatisfy { $0 == 0xA5 })
    return (read, written, out.prefix(written))
  }
}

/// The XML writer's base64 lines, in one call to the vector loops (CVectorLoops, where the
/// processor has AVX2) and a line at a time, against Foundation's base64 cut into CoreFoundation's
/// lines.
@Suite("Base64 lines in vectors")
struct Base64LineVectorTests {
  @Test(
    "Every length to 300 at every indent writes Foundation's base64 in lines, either way",
    arguments: 0...8)
  func linesAsFoundation(_ indent: Int) {
    let bytesPerLine = (76 - 8 * indent) / 4 * 3
    for length in 0...300 {
      let data = scrambledBytes(length, shift: 5)
      var expected = Data()
      for start in stride(from: 0, to: length, by: bytesPerLine) {
        expected.append(Data(repeating: 0x09, count: indent))
        expected.append(data[start..<min(start + bytesPerLine, length)].base64EncodedData())
        expected.append(0x0A)
      }
      #expect(XMLPropertyListWriter.base64LinesLength(length, indent: indent) == expected.count)
      for vectors in [true, false] {
        // One byte more than the text, which must stay as it was.
        var text = Data(repeating: 0xA5, count: expected.count + 1)
        text.withUnsafeMutableBytes { out in
          data.withUnsafeBytes { bytes in
            XMLPropertyListWriter.writeBase64Lines(
              bytes, indent: indent, length: expected.count, to: out.baseAddress!,
              vectors: vectors)
          }
        }
        #expect(
          text.dropLast() == expected, "length \(length), indent \(indent), vectors \(vectors)")
        #expect(text.last == 0xA5)
      }
    }
  }

  @Test(
    "A line length that is not a positive multiple of three, or an indent above 8, is turned down",
    arguments: [0, 1, 50])
  func refusesOddLines(_ bytesPerLine: Int) {
    var out = [UInt8](repeating: 0, count: 16)
    let bytes: [UInt8] = [1, 2, 3]
    #expect(cb64v_encode_lines(bytes, 3, bytesPerLine, 1, &out) == 0)
    // Nor an indent above CoreFoundation's 8.
    #expect(cb64v_encode_lines(bytes, 3, 3, 9, &out) == 0)
    #expect(out == [UInt8](repeating: 0, count: 16))
  }
}

/// Base64 in lines (the XML reader's `<data>`), decoded in one vector loop where the processor has
/// AVX2 (`cb64v_decode_lines`), against the scalar loops: the same stop, bytes and count for lines
/// of every length and layout, and for every byte value at every position of them.
@Suite("Base64 lines decoded in vectors")
struct Base64LineDecodingTests {
  /// Foundation's base64 of `length` bytes, cut into lines of `characters`, each after `lead`
  /// and ended by `end`.
  static func lines(_ length: Int, characters: Int, lead: String, end: String) -> [UInt8] {
    let text = [UInt8](scrambledBytes(length, shift: 11).base64EncodedData())
    var result = [UInt8]()
    for start in stride(from: 0, to: text.count, by: characters) {
      result +=
        Array(lead.utf8) + text[start..<min(start + characters, text.count)] + Array(end.utf8)
    }
    return result
  }

  // The characters read, the bytes written, and those bytes: in vectors where the processor has
  // them, or by the scalar loops.
  static func decoded(_ text: [UInt8], vectors: Bool, guess: Int = 0) -> (
    read: Int, bytes: [UInt8]
  ) {
    // Three bytes a group and one more, as the loops need; filled so that a stray write shows.
    var out = [UInt8](repeating: 0xA5, count: text.count / 4 * 3 + 1)
    var line = guess
    let (read, written) = out.withUnsafeMutableBytes { out in
      text.withUnsafeBytes { text in
        Base64Groups.withDecoder {
          $0.decodeLines(text, line: &line, into: out.baseAddress!, vectors: vectors)
        }
      }
    }
    #expect(out.dropFirst(written + 1).allSatisfy { $0 == 0xA5 })
    return (read, Array(out.prefix(written)))
  }

  @Test(
    "Lines of every layout: the vector loop reads and writes what the scalar loops do",
    arguments: [
      (64, "\t", "\n"), (68, "\t", "\n"), (76, "", "\n"), (4, " ", "\r\n"), (36, "\t\t\t", "\n"),
      (32, "", " "), (100, "", "\n"), (68, "", ""),
    ] as [(Int, String, String)])
  func layouts(_ characters: Int, _ lead: String, _ end: String) {
    for length in [0, 1, 2, 3, 24, 47, 48, 49, 51, 300, 1_000] {
      let text = Self.lines(length, characters: characters, lead: lead, end: end)
      let scalar = Self.decoded(text, vectors: false)
      // The guess a call starts with, right, wrong or not of whole groups, changes nothing.
      for guess in [0, 4, 6, 32, 64, 68, 1_000] {
        let vector = Self.decoded(text, vectors: true, guess: guess)
        let label = "\(length) bytes in lines of \(characters), guess \(guess)"
        #expect(vector.read == scalar.read, "\(label)")
        #expect(vector.bytes == scalar.bytes, "\(label)")
        // The scalar loops too (what a processor without AVX2 runs): a guess not of whole groups
        // once stopped them after the first group.
        let guessed = Self.decoded(text, vectors: false, guess: guess)
        #expect(guessed.read == scalar.read, "\(label), scalar")
        #expect(guessed.bytes == scalar.bytes, "\(label), scalar")
      }
    }
    // Whole groups throughout: everything is read, and decodes to the bytes.
    let whole = Self.lines(300, characters: characters, lead: lead, end: end)
    #expect(Self.decoded(whole, vectors: true).read == whole.count)
    #expect(Self.decoded(whole, vectors: true).bytes == [UInt8](scrambledBytes(300, shift: 11)))
  }

  @Test("Every byte value at every position of three lines: the same stop and bytes either way")
  func everyByteAtEveryPosition() {
    let text = Self.lines(150, characters: 68, lead: "\t", end: "\n")
    for value in 0...255 {
      for position in text.indices {
        var changed = text
        changed[position] = UInt8(value)
        let vector = Self.decoded(changed, vectors: true)
        let scalar = Self.decoded(changed, vectors: false)
        #expect(vector.read == scalar.read, "byte \(value) at \(position)")
        #expect(vector.bytes == scalar.bytes, "byte \(value) at \(position)")
      }
    }
  }
}

import Foundation
import TestSupport
import Testing

@testable import ResumeDataBatch

@Suite("Line reader: lines as ranges of shared chunks")
struct LineReaderTests {
  /// What a reader is expected to give for one line.
  enum Expected: Equatable {
    case text([UInt8])
    case tooLong(Int)
  }

  /// Reads `input` whole with `reader`, handing it out in parts of the sizes `parts` gives in
  /// turn. Lines for which `keep` is true (all by default) are kept, with their chunk, to the end,
  /// so a chunk written over after its lines were handed out shows as wrong bytes; the others are
  /// copied out and let go at once, so that their chunks can be reused.
  static func lines(
    of input: [UInt8], maximumLength: Int, keep: (Int) -> Bool = { _ in true },
    parts: @escaping (Int) -> Int
  ) throws -> (lines: [Expected], largestRead: Int) {
    var offset = 0
    var calls = 0
    var largestRead = 0
    var reader = LineReader(maximumLength: maximumLength) { buffer in
      calls += 1
      largestRead = max(largestRead, buffer.count)
      let count = min(buffer.count, input.count - offset, parts(calls))
      guard count > 0 else { return 0 }
      input.withUnsafeBytes {
        buffer.baseAddress!.copyMemory(from: $0.baseAddress! + offset, byteCount: count)
      }
      offset += count
      return count
    }
    func expected(_ line: LineReader.Line) -> Expected {
      switch line {
      case .text(let chunk, let range): .text(Array(chunk.bytes(range)))
      case .tooLong(let length): .tooLong(length)
      }
    }
    var lines: [Expected?] = []
    var held: [(index: Int, line: LineReader.Line)] = []
    while let line = try reader.next() {
      if keep(lines.count) {
        held.append((lines.count, line))
        lines.append(nil)
      } else {
        lines.append(expected(line))
      }
    }
    for (index, line) in held { lines[index] = expected(line) }
    return (lines.map { $0! }, largestRead)
  }

  @Test(
    "Random lines across chunk boundaries come back exactly, whatever the reads' sizes",
    arguments: [1 as UInt64, 2, 3])
  func randomLines(seed: UInt64) throws {
    var random = SeededGenerator(seed: seed)
    var input: [UInt8] = []
    var expected: [Expected] = []
    // Over 3 MiB: several chunks, and lines that straddle their ends.
    while input.count < 3 << 20 {
      let length = Int.random(in: 0...40_000, using: &random)
      let line = (0..<length).map { _ in UInt8.random(in: 0x20...0x7E, using: &random) }
      input += line
      input += Bool.random(using: &random) ? [0x0D, 0x0A] : [0x0A]
      expected.append(.text(line))
    }
    let sizes = (0..<64).map { _ in Int.random(in: 1...300_000, using: &random) }
    let lines = try Self.lines(of: input, maximumLength: 1 << 20) { sizes[$0 % sizes.count] }.lines
    #expect(lines.count == expected.count)
    // The first line that differs, rather than megabytes of both.
    #expect(zip(lines, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset == nil)
  }

  @Test(
    "The limit counts a line's bytes less its line break, however the line arrives",
    arguments: [1, 3, 1 << 20])
  func limitIsExact(partSize: Int) throws {
    let ten = Array("0123456789".utf8)
    let input =
      ten + [0x0A] + ten + [0x0D, 0x0A] + ten + [0x41, 0x0A] + ten + [0x41, 0x0D, 0x0A]
      + ten + Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8) + [0x0D, 0x0A] + [0x42, 0x0A] + ten
      + [0x41, 0x0D]
    let lines = try Self.lines(of: input, maximumLength: 10) { _ in partSize }.lines
    #expect(
      lines == [
        .text(ten), .text(ten), .tooLong(11), .tooLong(11), .tooLong(36), .text([0x42]),
        .tooLong(11),
      ])
  }

  @Test("A last line without a line break is a line; a final line break adds no empty line")
  func lastLine() throws {
    #expect(
      try Self.lines(of: Array("a\n\nb".utf8), maximumLength: 5) { _ in 1 }.lines
        == [.text([0x61]), .text([]), .text([0x62])])
    #expect(
      try Self.lines(of: Array("a\r\n".utf8), maximumLength: 5) { _ in 2 }.lines == [.text([0x61])])
    #expect(try Self.lines(of: [], maximumLength: 5) { _ in 1 }.lines == [])
  }

  @Test(
    "Lines of up to 3 MiB, some let go as soon as read: a chunk no line refers to is reused or grown in place, and a held one is never written over",
    arguments: [0, 1, 3])
  func longLinesLetGo(keepEvery: Int) throws {
    var random = SeededGenerator(seed: 7 + UInt64(keepEvery))
    var input: [UInt8] = []
    var expected: [Expected] = []
    for index in 0..<24 {
      // Short lines between long ones, so that chunks hold the ends of one and the starts of others.
      let length = index % 3 == 0 ? Int.random(in: 0...3 << 20, using: &random) : index * 101
      let seed = UInt8(truncatingIfNeeded: index)
      let line = (0..<length).map {
        UInt8(0x20 + (UInt32(truncatingIfNeeded: $0) &* 31 &+ UInt32(seed)) % 95)
      }
      input += line
      input += [0x0A]
      expected.append(length > 2 << 20 ? .tooLong(length) : .text(line))
    }
    // Whole reads, then reads cut short at random (as a pipe delivers them): held bytes then sit
    // at every offset of a chunk when it is reused or grown.
    let short = (0..<64).map { _ in Int.random(in: 1...100_000, using: &random) }
    for parts in [{ (_: Int) in Int.max }, { short[$0 % short.count] }] {
      let (lines, largestRead) = try Self.lines(
        of: input, maximumLength: 2 << 20, keep: { keepEvery > 0 && $0 % keepEvery == 0 },
        parts: parts)
      #expect(lines.count == expected.count)
      #expect(
        zip(lines, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset == nil)
      // However much room a long line's chunk has, a read asks for one read's worth at most: a
      // line over the limit is given up on before its bytes fill the chunk.
      #expect(largestRead == LineReader.readSize)
    }
  }
}

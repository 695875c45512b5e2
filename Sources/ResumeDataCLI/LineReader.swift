import Foundation

/// Splits a byte stream into lines, holding at most one line (up to a limit) and one read's worth
/// of bytes: memory stays flat however long the input is.
struct LineReader {
  /// One line of the input.
  enum Line {
    /// The line's bytes, without its `\n` (and without a `\r` before it).
    case text([UInt8])
    /// A line longer than the limit, skipped without being held: its length in bytes.
    case tooLong(Int)
  }

  private let readPart: (UnsafeMutableRawBufferPointer) throws -> Int
  private let maximumLength: Int
  private var buffer: [UInt8]
  private var start = 0
  private var end = 0
  private var atEndOfInput = false

  /// Bytes asked for by each read.
  static let readSize = 1 << 20

  /// A reader over the parts `readPart` returns (0 at the end), refusing lines longer than
  /// `maximumLength` bytes.
  init(maximumLength: Int, readPart: @escaping (UnsafeMutableRawBufferPointer) throws -> Int) {
    self.readPart = readPart
    self.maximumLength = maximumLength
    buffer = [UInt8](repeating: 0, count: Self.readSize)
  }

  /// The next line, or nil at the end of the input. A last line without a line break is a line;
  /// an input that ends with a line break has no empty line after it.
  mutating func next() throws -> Line? {
    var searchFrom = start
    while true {
      if let newline = firstNewline(from: searchFrom) {
        var lineEnd = newline
        if lineEnd > start, buffer[lineEnd - 1] == UInt8(ascii: "\r") { lineEnd -= 1 }
        let line = Array(buffer[start..<lineEnd])
        start = newline + 1
        return .text(line)
      }
      if end - start > maximumLength { return .tooLong(try skipRestOfLine()) }
      if atEndOfInput {
        guard start < end else { return nil }
        var lineEnd = end
        if buffer[lineEnd - 1] == UInt8(ascii: "\r") { lineEnd -= 1 }
        let line = Array(buffer[start..<lineEnd])
        start = end
        return .text(line)
      }
      // The bytes held were searched already; `fill` may move them to the front.
      let searched = end - start
      try fill()
      searchFrom = start + searched
    }
  }

  private func firstNewline(from offset: Int) -> Int? {
    buffer.withUnsafeBufferPointer { bytes in
      guard offset < end,
        let found = memchr(bytes.baseAddress! + offset, Int32(UInt8(ascii: "\n")), end - offset)
      else { return nil }
      return bytes.baseAddress!.distance(to: found.assumingMemoryBound(to: UInt8.self))
    }
  }

  /// Reads more input after what is held, moving the held bytes to the front (or growing the
  /// buffer for a long line) to make room.
  private mutating func fill() throws {
    if start > 0 {
      buffer.withUnsafeMutableBytes { bytes in
        bytes.baseAddress!.copyMemory(from: bytes.baseAddress! + start, byteCount: end - start)
      }
      end -= start
      start = 0
    }
    if buffer.count - end < Self.readSize / 2 {
      buffer.append(contentsOf: repeatElement(0, count: Self.readSize))
    }
    let count = try buffer.withUnsafeMutableBytes { bytes in
      try readPart(UnsafeMutableRawBufferPointer(rebasing: bytes[end...]))
    }
    if count == 0 { atEndOfInput = true }
    end += count
  }

  /// Drops the held start of an over-long line and reads on to its line break; the line's length.
  private mutating func skipRestOfLine() throws -> Int {
    var length = end - start
    start = 0
    end = 0
    buffer = [UInt8](repeating: 0, count: Self.readSize)
    while true {
      let count = try buffer.withUnsafeMutableBytes { try readPart($0) }
      if count == 0 {
        atEndOfInput = true
        return length
      }
      end = count
      if let newline = firstNewline(from: 0) {
        start = newline + 1
        return length + newline
      }
      length += count
      end = 0
    }
  }
}

import PortableFoundation

/// Bytes read from an input, shared by the lines in them and by whoever holds those lines: lines
/// are handed out as ranges of the chunk they were read into, never copied out of it.
///
/// While a line handed out refers to a chunk, the reader writes its bytes only past its `end`, and
/// only lines wholly before that are handed out, so the bytes a line covers never change once it
/// has been handed out. Only a chunk nothing else refers to is written over or moved (`resize`):
/// then no other thread can be reading it.
final class ReadChunk: @unchecked Sendable {
  /// The chunk's memory.
  private(set) var base: UnsafeMutableRawPointer
  /// Bytes the chunk can hold.
  private(set) var capacity: Int

  /// A chunk with room for `capacity` bytes.
  init(capacity: Int) {
    self.capacity = capacity
    base = malloc(max(capacity, 1))!
  }

  deinit { free(base) }

  /// Gives the chunk room for `capacity` bytes, keeping as many of its bytes as fit. Only for a
  /// chunk no line handed out refers to: its bytes may move.
  func resize(to capacity: Int) {
    // realloc: glibc moves a large block's pages rather than copying its bytes, so a long line
    // is never resident twice while its chunk grows.
    base = realloc(base, max(capacity, 1))!
    self.capacity = capacity
  }

  /// The bytes of `range`.
  func bytes(_ range: Range<Int>) -> UnsafeBufferPointer<UInt8> {
    UnsafeBufferPointer(
      start: base.assumingMemoryBound(to: UInt8.self) + range.lowerBound, count: range.count)
  }
}

/// Splits a byte stream into lines, holding at most one line (up to a limit) and one read's worth
/// of bytes besides the lines it has handed out: memory stays flat however long the input is, as
/// long as the lines handed out are let go.
struct LineReader {
  /// One line of the input.
  enum Line {
    /// The line's bytes, without its `\n` (and without a `\r` before it): a range of a chunk.
    case text(ReadChunk, Range<Int>)
    /// A line longer than the limit, skipped without being held: its length in bytes.
    case tooLong(Int)
  }

  private let readPart: (UnsafeMutableRawBufferPointer) throws -> Int
  private let maximumLength: Int
  // Bytes before `start` were handed out (or skipped); `start..<end` are held, not yet a line.
  private var chunk: ReadChunk
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
    chunk = ReadChunk(capacity: Self.readSize)
  }

  /// The next line, or nil at the end of the input. A last line without a line break is a line;
  /// an input that ends with a line break has no empty line after it. A line longer than the
  /// limit (less its line break) is `tooLong`, however it arrived.
  mutating func next() throws -> Line? {
    var searchFrom = start
    while true {
      if let newline = firstNewline(from: searchFrom) {
        let line = text(upTo: newline)
        start = newline + 1
        return line
      }
      // One more than the limit may still be a line's last byte and the `\r` of its `\r\n`.
      if end - start > maximumLength + 1 { return .tooLong(try skipRestOfLine()) }
      if atEndOfInput {
        guard start < end else { return nil }
        let line = text(upTo: end)
        start = end
        return line
      }
      // The bytes held were searched already; `fill` may move them to a new chunk.
      let searched = end - start
      try fill()
      searchFrom = start + searched
    }
  }

  /// The held bytes up to `lineEnd` (a line break, or the end of the input), less a `\r` at
  /// their end; or their length, if that is over the limit.
  private func text(upTo lineEnd: Int) -> Line {
    var lineEnd = lineEnd
    if lineEnd > start, byte(at: lineEnd - 1) == UInt8(ascii: "\r") { lineEnd -= 1 }
    guard lineEnd - start <= maximumLength else { return .tooLong(lineEnd - start) }
    return .text(chunk, start..<lineEnd)
  }

  private func byte(at offset: Int) -> UInt8 {
    chunk.base.load(fromByteOffset: offset, as: UInt8.self)
  }

  private func firstNewline(from offset: Int) -> Int? {
    guard offset < end,
      let found = memchr(chunk.base + offset, Int32(UInt8(ascii: "\n")), end - offset)
    else { return nil }
    return chunk.base.distance(to: found)
  }

  /// Reads more input after what is held. When the chunk has too little room left, the held bytes
  /// move to its front, in a chunk twice their size for a long line. A chunk that lines handed out
  /// still refer to is never written over: the held bytes then move to a new chunk.
  private mutating func fill() throws {
    if chunk.capacity - end < Self.readSize / 2 {
      moveHeldBytesToFront(capacity: max(Self.readSize, (end - start) * 2))
    }
    // No more than a read's worth at a time, however much room a long line's chunk has: a line
    // over the limit is then given up on within a read of passing it, before its bytes fill the
    // chunk.
    let count = try readPart(
      UnsafeMutableRawBufferPointer(
        start: chunk.base + end, count: min(chunk.capacity - end, Self.readSize)))
    if count == 0 { atEndOfInput = true }
    end += count
  }

  /// Moves the held bytes to the front of a chunk of `capacity` bytes: this one, resized, when no
  /// line handed out refers to it (each holds a reference to it); else a new one, since the bytes
  /// of a line handed out must not change.
  private mutating func moveHeldBytesToFront(capacity: Int) {
    let held = end - start
    if isKnownUniquelyReferenced(&chunk) {
      if start > 0 { memmove(chunk.base, chunk.base + start, held) }
      if chunk.capacity != capacity { chunk.resize(to: capacity) }
    } else {
      let next = ReadChunk(capacity: capacity)
      next.base.copyMemory(from: chunk.base + start, byteCount: held)
      chunk = next
    }
    start = 0
    end = held
  }

  /// Drops the held start of an over-long line and reads on to its line break; the line's length,
  /// less its line break (`\n` or `\r\n`).
  private mutating func skipRestOfLine() throws -> Int {
    var length = end - start
    var last = byte(at: end - 1)
    // The held start is dropped, and a chunk grown for it goes back to a read's size.
    start = end
    moveHeldBytesToFront(capacity: Self.readSize)
    while true {
      let count = try readPart(
        UnsafeMutableRawBufferPointer(start: chunk.base, count: chunk.capacity))
      if count == 0 {
        atEndOfInput = true
        return last == UInt8(ascii: "\r") ? length - 1 : length
      }
      end = count
      if let newline = firstNewline(from: 0) {
        start = newline + 1
        if newline > 0 { last = byte(at: newline - 1) }
        return length + newline - (last == UInt8(ascii: "\r") ? 1 : 0)
      }
      length += count
      last = byte(at: count - 1)
      end = 0
    }
  }
}

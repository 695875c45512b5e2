import CVectorLoops
import PortableFoundation

/// Bytes being written: a block of their own (`ReusableBlocks`), doubled when full and handed to
/// `Data` when done, without a copy. The XML writer and `batch`'s result lines write through it.
///
/// Through an array, each append checked uniqueness and capacity and went through a generic path,
/// which cost more than the text itself, and the finished array was copied into a `Data`.
///
/// Only `reserve`, `putDecimal` and `append` make room; the other writers assume it was reserved,
/// so that a run of small writes checks once. Public as SPI, and frozen, for the same reason as
/// `BinaryObjects`: `package` methods are not inlined across modules, and the small writers must be.
@_spi(Writing) @frozen public struct OutputBytes: ~Copyable {
  @usableFromInline var start: UnsafeMutableRawPointer
  @usableFromInline var count: Int
  @usableFromInline var capacity: Int

  /// Empty, with room for `capacity` bytes.
  @inlinable public init(capacity: Int) {
    self.capacity = max(capacity, 64)
    count = 0
    start = cvl_block_take(self.capacity)!
  }

  @inlinable deinit { cvl_block_give(start) }

  /// The bytes, in the memory they were written in.
  @inlinable public consuming func finish() -> Data {
    let data = Data(
      bytesNoCopy: start, count: count, deallocator: .custom { start, _ in cvl_block_give(start) })
    discard self
    return data
  }

  /// The bytes, in the block they were written in, which is now the caller's to give back
  /// (`cvl_block_give`): for bytes handed on by pointer rather than as `Data`.
  @inlinable public consuming func finishInBlock() -> UnsafeMutableRawBufferPointer {
    let bytes = UnsafeMutableRawBufferPointer(start: start, count: count)
    discard self
    return bytes
  }

  /// The number of bytes written.
  @inlinable public var written: Int { count }

  /// Makes room for `more` bytes after those written.
  @inlinable @inline(__always) public mutating func reserve(_ more: Int) {
    guard capacity &- count < more else { return }
    capacity = max(capacity * 2, count + more)
    start = cvl_block_resize(start, count, capacity)!
  }

  /// One byte, in room reserved.
  @inlinable @inline(__always) public mutating func put(_ byte: UInt8) {
    start.storeBytes(of: byte, toByteOffset: count, as: UInt8.self)
    count &+= 1
  }

  /// An integer's big-endian bytes, in room reserved.
  @inlinable @inline(__always)
  public mutating func put<Integer: FixedWidthInteger>(bigEndian value: Integer) {
    start.storeBytes(of: value.bigEndian, toByteOffset: count, as: Integer.self)
    count &+= MemoryLayout<Integer>.size
  }

  /// `length` bytes from `bytes`, in room reserved.
  @inlinable @inline(__always) public mutating func put(_ bytes: UnsafeRawPointer, _ length: Int) {
    let target = start + count
    // Most writes are a tag or a key of a few bytes, for which a call to `memmove` costs several
    // times the copy: up to 16 bytes are two loads and two stores, overlapping in the middle.
    if length <= 16 {
      if length >= 8 {
        let head = bytes.loadUnaligned(as: UInt64.self)
        let tail = bytes.loadUnaligned(fromByteOffset: length &- 8, as: UInt64.self)
        target.storeBytes(of: head, as: UInt64.self)
        target.storeBytes(of: tail, toByteOffset: length &- 8, as: UInt64.self)
      } else if length >= 4 {
        let head = bytes.loadUnaligned(as: UInt32.self)
        let tail = bytes.loadUnaligned(fromByteOffset: length &- 4, as: UInt32.self)
        target.storeBytes(of: head, as: UInt32.self)
        target.storeBytes(of: tail, toByteOffset: length &- 4, as: UInt32.self)
      } else if length > 0 {
        // One to three bytes: the first, the middle and the last (some of them the same).
        let middle = length &>> 1
        let last = length &- 1
        target.storeBytes(of: bytes.load(as: UInt8.self), as: UInt8.self)
        target.storeBytes(
          of: bytes.load(fromByteOffset: middle, as: UInt8.self), toByteOffset: middle,
          as: UInt8.self)
        target.storeBytes(
          of: bytes.load(fromByteOffset: last, as: UInt8.self), toByteOffset: last,
          as: UInt8.self)
      }
    } else {
      target.copyMemory(from: bytes, byteCount: length)
    }
    count &+= length
  }

  /// Bytes, in room reserved.
  @inlinable @inline(__always) public mutating func put(_ bytes: UnsafeRawBufferPointer) {
    // An empty buffer may have no address.
    guard let base = bytes.baseAddress else { return }
    put(base, bytes.count)
  }

  /// `byte` `count` times, in room reserved.
  @inlinable @inline(__always) public mutating func put(repeating byte: UInt8, count repeats: Int) {
    (start + count).initializeMemory(as: UInt8.self, repeating: byte, count: repeats)
    count &+= repeats
  }

  /// An integer in decimal, as `description` writes it, without making a `String`.
  @inlinable public mutating func putDecimal(negative: Bool, magnitude: UInt64) {
    // A sign and the 20 digits of `UInt64.max` at most.
    reserve(21)
    if negative { put(UInt8(ascii: "-")) }
    var magnitude = magnitude
    var digits = 1
    var scale: UInt64 = 1
    while magnitude / scale >= 10 {
      scale &*= 10
      digits &+= 1
    }
    for position in 0..<digits {
      start.storeBytes(
        of: UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude / scale),
        toByteOffset: count &+ position, as: UInt8.self)
      magnitude %= scale
      scale /= 10
    }
    count &+= digits
  }

  /// `length` bytes, which `write` fills in all.
  @inlinable public mutating func append(
    _ length: Int, _ write: (UnsafeMutableRawPointer) -> Void
  ) {
    reserve(length)
    write(start + count)
    count &+= length
  }
}

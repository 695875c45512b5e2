import PortableFoundation
@_spi(InPlace) @_spi(Differential) @_spi(Writing) import PropertyList

// The sub-archive writer's bytes (see SubArchiveWriter.swift): the binary writer's markers,
// references, offset table and trailer, written as the flattener flattens.

extension Flattener {
  /// A container object of `count` entries (elements, or keys and values), with room for its
  /// references: its index, and where the references go.
  mutating func container(_ marker: UInt8, _ count: Int) -> (index: Int, start: Int) {
    let references = marker == 0xD0 ? 2 * count : count
    let index = begin(10 + references * referenceSize)
    if count < 15 {
      put(marker | UInt8(count))
    } else {
      writeMarker(marker, count)
    }
    let start = at
    at &+= references &* referenceSize
    contents.append(WrittenContents(object: index, start: start, count: count))
    self.references &+= references
    return (index, start)
  }

  /// A container's reference at `position`.
  @inline(__always)
  mutating func setReference(
    _ container: (index: Int, start: Int), _ position: Int, _ index: Int
  ) {
    let address = self.out.unsafelyUnwrapped + (container.start &+ position &* referenceSize)
    if referenceSize == 1 {
      address.storeBytes(of: UInt8(truncatingIfNeeded: index), as: UInt8.self)
    } else {
      Self.store(UInt64(index), referenceSize, address)
    }
  }

  /// The next object's index, with room for its `size` bytes.
  @inline(__always)
  mutating func begin(_ size: Int) -> Int {
    if capacity &- at < size { grow(size) }
    return offsets.append(at)
  }

  private mutating func grow(_ size: Int) {
    capacity = max(capacity * 2, at + size + 64)
    out = ReusableBlocks.resize(out.unsafelyUnwrapped, keeping: at, to: capacity)!
  }

  @inline(__always)
  mutating func put(_ byte: UInt8) {
    out.unsafelyUnwrapped.storeBytes(of: byte, toByteOffset: at, as: UInt8.self)
    at &+= 1
  }

  @inline(__always)
  mutating func putSized(_ value: UInt64, _ size: Int) {
    Self.store(value, size, out.unsafelyUnwrapped + at)
    at &+= size
  }

  /// An integer object of the fewest bytes that hold `bits`.
  mutating func writeInteger(_ bits: UInt64) {
    let size = Self.byteCount(bits)
    put(0x10 | UInt8(size.trailingZeroBitCount))
    putSized(bits, size)
  }

  /// A marker with its count, the count as an integer object after it from 15 on.
  mutating func writeMarker(_ marker: UInt8, _ count: Int) {
    if count < 15 {
      put(marker | UInt8(count))
    } else {
      put(marker | 0x0F)
      writeInteger(UInt64(count))
    }
  }

  /// The offset table and the trailer after the objects; the bytes.
  mutating func finish() -> Data {
    let count = offsets.count
    let tableOffset = at
    let offsetSize = Self.byteCount(UInt64(tableOffset))
    if capacity - at < count * offsetSize + 32 { grow(count * offsetSize + 32) }
    let table = out! + tableOffset
    switch offsetSize {
    case 1:
      for position in 0..<count {
        table.storeBytes(
          of: UInt8(truncatingIfNeeded: offsets.base[position]), toByteOffset: position,
          as: UInt8.self)
      }
    case 2:
      for position in 0..<count {
        table.storeBytes(
          of: UInt16(truncatingIfNeeded: offsets.base[position]).bigEndian,
          toByteOffset: 2 * position, as: UInt16.self)
      }
    default:
      for position in 0..<count {
        Self.store(UInt64(offsets.base[position]), offsetSize, table + offsetSize * position)
      }
    }
    at += count * offsetSize
    let trailer = out! + at
    trailer.initializeMemory(as: UInt8.self, repeating: 0, count: 6)
    trailer.storeBytes(of: UInt8(offsetSize), toByteOffset: 6, as: UInt8.self)
    trailer.storeBytes(of: UInt8(referenceSize), toByteOffset: 7, as: UInt8.self)
    Self.store(UInt64(count), 8, trailer + 8)
    Self.store(0, 8, trailer + 16)
    Self.store(UInt64(tableOffset), 8, trailer + 24)
    at += 32
    let data = ReusableBlocks.data(adopting: out!, count: at)
    out = nil
    capacity = 0
    return data
  }

  /// The fewest of 1, 2, 4 or 8 bytes that hold `value` (a count, an offset, a UID).
  @inline(__always)
  static func byteCount(_ value: UInt64) -> Int {
    value <= 0xFF ? 1 : value <= 0xFFFF ? 2 : value <= 0xFFFF_FFFF ? 4 : 8
  }

  /// `size` (1, 2, 4 or 8) big-endian bytes of `value` at `address`.
  @inline(__always)
  static func store(_ value: UInt64, _ size: Int, _ address: UnsafeMutableRawPointer) {
    switch size {
    case 1: address.storeBytes(of: UInt8(truncatingIfNeeded: value), as: UInt8.self)
    case 2:
      address.storeBytes(of: UInt16(truncatingIfNeeded: value).bigEndian, as: UInt16.self)
    case 4:
      address.storeBytes(of: UInt32(truncatingIfNeeded: value).bigEndian, as: UInt32.self)
    default: address.storeBytes(of: value.bigEndian, as: UInt64.self)
    }
  }
}

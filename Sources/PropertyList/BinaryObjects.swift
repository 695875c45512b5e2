import PortableFoundation

/// What an object of a binary property list is.
@_spi(InPlace)
public enum BinaryObjectKind: Equatable, Sendable {
  case boolean, integer, real, date, data, string, uid, array, dictionary
}

/// The objects of a binary property list checked by `BinaryPropertyListView`, read in place.
///
/// A struct of plain pointers into the view's storage, so that its small accessors inline into
/// the in-place readers of the keyed-archive layer, which call them hundreds of times per archive
/// (methods of a class are not inlined across modules, nor are `package` ones: hence public, as
/// SPI). It is valid only while its view lives, and
/// its accessors must only be given objects the view recorded (found by following references
/// from the top object); they do not check again.
@_spi(InPlace)
public struct BinaryObjects {
  /// What an object is.
  public typealias Kind = BinaryObjectKind

  @usableFromInline let base: UnsafeRawPointer
  @usableFromInline let objectAreaEnd: Int
  @usableFromInline let objectOffsets: UnsafePointer<Int>
  @usableFromInline let spans: UnsafePointer<ByteSpan>
  @usableFromInline let recorded: UnsafePointer<Int>
  @usableFromInline let referenceWidth: Int

  init(
    base: UnsafeRawPointer, objectAreaEnd: Int, objectOffsets: UnsafePointer<Int>,
    spans: UnsafePointer<ByteSpan>, recorded: UnsafePointer<Int>, referenceWidth: Int
  ) {
    self.base = base
    self.objectAreaEnd = objectAreaEnd
    self.objectOffsets = objectOffsets
    self.spans = spans
    self.recorded = recorded
    self.referenceWidth = referenceWidth
  }

  /// Where an object starts, from the offset table: any index below the object count, read or
  /// not.
  @inlinable @inline(__always)
  public func offset(_ object: Int) -> Int {
    objectOffsets[object]
  }

  @inlinable @inline(__always)
  func marker(_ object: Int) -> UInt8 {
    base.load(fromByteOffset: objectOffsets[object], as: UInt8.self)
  }

  /// What an object is.
  @inlinable @inline(__always)
  public func kind(_ object: Int) -> Kind {
    switch marker(object) >> 4 {
    case 0x0: return .boolean
    case 0x1: return .integer
    case 0x2: return .real
    case 0x3: return .date
    case 0x4: return .data
    case 0x5, 0x6: return .string
    case 0x8: return .uid
    case 0xA: return .array
    default: return .dictionary
    }
  }

  /// Whether an object is of a kind.
  @inlinable @inline(__always)
  public func isKind(_ object: Int, _ kind: Kind) -> Bool {
    self.kind(object) == kind
  }

  /// The count of a data, string, array or dictionary object (bytes for ASCII strings, units for
  /// UTF-16 ones), and where its contents start, as the check recorded them; nothing for objects
  /// it did not record (which callers never pass).
  @inlinable @inline(__always)
  public func contents(_ object: Int) -> (count: Int, start: Int) {
    guard recorded[object] > 0 else { return (0, 0) }
    let span = spans[object]
    return (span.count, span.start)
  }

  /// The number of elements of an array, or entries of a dictionary.
  @inlinable @inline(__always)
  public func count(_ object: Int) -> Int {
    contents(object).count
  }

  /// The object the reference at `position` of a container's references refers to, `start` being
  /// where they start (`contents`): an array's elements, or a dictionary's keys then its values.
  @inlinable @inline(__always)
  public func reference(_ start: Int, _ position: Int) -> Int {
    let at = start &+ position &* referenceWidth
    switch referenceWidth {
    case 1: return Int(base.load(fromByteOffset: at, as: UInt8.self))
    case 2:
      return Int(UInt16(bigEndian: base.loadUnaligned(fromByteOffset: at, as: UInt16.self)))
    default: return referenceOfAnyWidth(at)
    }
  }

  @usableFromInline
  func referenceOfAnyWidth(_ at: Int) -> Int {
    Int(truncatingIfNeeded: BinaryBytes.readSizedUInt(bytes, at, referenceWidth))
  }

  private var bytes: UnsafeRawBufferPointer {
    UnsafeRawBufferPointer(start: base, count: objectAreaEnd)
  }

  /// The object an array's element refers to.
  @inlinable @inline(__always)
  public func element(_ array: Int, _ position: Int) -> Int {
    reference(contents(array).start, position)
  }

  /// The key object of a dictionary's entry.
  @inlinable @inline(__always)
  public func key(_ dictionary: Int, _ position: Int) -> Int {
    reference(contents(dictionary).start, position)
  }

  /// The value object of a dictionary's entry.
  @inlinable @inline(__always)
  public func value(_ dictionary: Int, _ position: Int) -> Int {
    let (count, start) = contents(dictionary)
    return reference(start, count &+ position)
  }

  /// The value object for a key of a dictionary whose dictionaries are plain
  /// (`BinaryPropertyListView.dictionariesArePlain`), or nil when the key is absent.
  ///
  /// - Parameter fromLast: search from the last entry (in a plain dictionary no key is there
  ///   twice, so either order finds the same entry): for `$class`, which archivers write last.
  @inlinable @inline(__always)
  public func value(_ dictionary: Int, forKey key: StaticString, fromLast: Bool = false) -> Int? {
    let (count, start) = contents(dictionary)
    let length = key.utf8CodeUnitCount
    // An ASCII string under 15 bytes is normally written with its length in its marker, so most
    // keys are told apart by that one byte; any other spelling is compared as `isString` does.
    let marker: UInt8 = length < 15 ? 0x50 | UInt8(length) : 0x5F
    for step in 0..<count {
      let position = fromLast ? count &- 1 &- step : step
      let keyObject = reference(start, position)
      let offset = objectOffsets[keyObject]
      let keyMarker = base.load(fromByteOffset: offset, as: UInt8.self)
      let found: Bool
      if keyMarker == marker, length < 15 {
        found = memcmp(base + offset + 1, key.utf8Start, length) == 0
      } else if keyMarker == 0x5F || keyMarker >> 4 == 0x6 {
        found = isString(keyObject, equalTo: key)
      } else {
        found = false
      }
      if found { return reference(start, count &+ position) }
    }
    return nil
  }

  /// The bytes of an ASCII string object, or nil for a UTF-16 one.
  @inlinable @inline(__always)
  public func asciiBytes(_ object: Int) -> UnsafeRawBufferPointer? {
    guard marker(object) >> 4 == 0x5 else { return nil }
    let (count, start) = contents(object)
    return UnsafeRawBufferPointer(start: base + start, count: count)
  }

  /// Whether an object is a string equal to `text` (as `String` compares them).
  @inlinable
  public func isString(_ object: Int, equalTo text: StaticString) -> Bool {
    switch marker(object) >> 4 {
    case 0x5:
      let (count, start) = contents(object)
      // ASCII against ASCII: equal exactly when the bytes are.
      return count == text.utf8CodeUnitCount && memcmp(base + start, text.utf8Start, count) == 0
    case 0x6:
      return string(object) == text.description
    default:
      return false
    }
  }

  /// A string object's value.
  public func string(_ object: Int) -> String {
    let (count, start) = contents(object)
    if marker(object) >> 4 == 0x5 {
      return String(
        decoding: UnsafeRawBufferPointer(start: base + start, count: count), as: UTF8.self)
    }
    return ValueBuilder.decodeUTF16(UnsafeRawBufferPointer(start: base + start, count: 2 * count))
  }

  /// A data object's bytes, in place (valid while the view lives).
  @inlinable @inline(__always)
  public func dataBytes(_ object: Int) -> UnsafeRawBufferPointer {
    let (count, start) = contents(object)
    return UnsafeRawBufferPointer(start: base + start, count: count)
  }

  /// A data object's bytes.
  public func data(_ object: Int) -> Data {
    let (count, start) = contents(object)
    return ReusableBlocks.data(copying: base + start, count: count)
  }

  /// An integer object's value.
  public func integer(_ object: Int) -> PropertyListInteger {
    let offset = objectOffsets[object]
    let area = BinaryObjectArea(
      bytes: bytes, objectAreaEnd: objectAreaEnd, maximumValueLength: .max)
    return (try? area.readInteger(at: offset, marker: bytes[offset])) ?? PropertyListInteger(0)
  }

  /// A real object's value.
  public func real(_ object: Int) -> PropertyListReal {
    let offset = objectOffsets[object]
    if bytes[offset] & 0x0F == 2 {
      let bits = UInt32(
        bigEndian: bytes.loadUnaligned(fromByteOffset: offset + 1, as: UInt32.self))
      return PropertyListReal(Float(bitPattern: bits))
    }
    return PropertyListReal(Double(bitPattern: BinaryBytes.readUInt64(bytes, offset + 1)))
  }

  /// A boolean object's value.
  @inlinable @inline(__always)
  public func boolean(_ object: Int) -> Bool {
    marker(object) == 0x09
  }

  /// A UID object's value.
  @inlinable @inline(__always)
  public func uid(_ object: Int) -> UInt64 {
    let offset = objectOffsets[object]
    // One byte is what archivers write for the first 256 objects.
    if base.load(fromByteOffset: offset, as: UInt8.self) == 0x80 {
      return UInt64(base.load(fromByteOffset: offset + 1, as: UInt8.self))
    }
    return wideUID(offset)
  }

  @usableFromInline
  func wideUID(_ offset: Int) -> UInt64 {
    let size = Int(bytes[offset] & 0x0F) + 1
    return BinaryBytes.readSizedUInt(bytes, offset + 1 + max(0, size - 8), min(size, 8))
  }
}

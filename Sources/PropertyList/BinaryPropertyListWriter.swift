import PortableFoundation

/// Writes binary property lists (`bplist00`) exactly as CoreFoundation does.
///
/// CoreFoundation flattens the value depth-first (a dictionary's keys, then its values), uniquing
/// equal strings, numbers, dates and data; every boolean occurrence gets an object slot, but
/// references go to the first one; arrays, dictionaries and UIDs are never shared. References and
/// offsets use the fewest of 1, 2, 4 or 8 bytes that can hold them. Re-encoding an unmodified
/// Apple-made binary plist read by ``BinaryPropertyListReader`` therefore gives back the same
/// bytes.
public struct BinaryPropertyListWriter: Sendable {
  /// Deepest nesting written; deeper values are refused rather than risking the stack.
  public var maximumDepth: Int

  /// Creates a writer.
  public init(maximumDepth: Int = PropertyListLimits.default.maximumDepth) {
    self.maximumDepth = maximumDepth
  }

  /// Writes a value.
  ///
  /// - Returns: the bytes of the binary plist.
  /// - Throws: ``PropertyListError`` with code `.unencodable` if the value nests deeper than
  ///   `maximumDepth`.
  public func write(_ value: PropertyListValue) throws -> Data {
    try BinaryPropertyListObjectTable(flattening: value, maximumDepth: maximumDepth).encoded()
  }
}

/// The identity CoreFoundation's uniquing sets give a scalar: strings compare by their exact code
/// units (not by Swift's canonical equivalence), integers and reals each by value within their own
/// kind, dates by time, data by bytes.
enum UniqueKey: Hashable {
  case string(ExactString)
  case integer(UInt64, unsigned: Bool)
  case real(UInt64)
  case date(UInt64)
  case data(Data)

  init?(_ value: PropertyListValue) {
    switch value {
    case .string(let string):
      self = .string(ExactString(string))
    case .integer(let integer):
      self = .integer(integer.bitPattern, unsigned: integer.needsUnsignedStorage)
    case .real(let real):
      // CoreFoundation unique reals only with reals (an integer 1 and a real 1.0 stay two objects);
      // 32- and 64-bit reals of equal value are equal, and so are 0.0 and -0.0.
      let number = real.value
      self = .real(number.isNaN ? Double.nan.bitPattern : number == 0 ? 0 : number.bitPattern)
    case .date(let date):
      let time = date.timeIntervalSinceReferenceDate
      self = .date(time == 0 ? 0 : time.bitPattern)
    case .data(let data):
      self = .data(data)
    case .dictionary, .array, .boolean, .uid:
      return nil
    }
  }
}

struct Flattener {
  let maximumDepth: Int
  var objects: [BinaryPropertyListObjectTable.Object] = []
  var unique: [UniqueKey: Int] = [:]
  var firstTrue: Int?
  var firstFalse: Int?

  init(maximumDepth: Int) {
    self.maximumDepth = maximumDepth
  }

  mutating func flatten(_ value: PropertyListValue, depth: Int) throws -> Int {
    switch value {
    case .array(let elements):
      let index = try openContainer(depth)
      var references = [Int]()
      references.reserveCapacity(elements.count)
      for element in elements { references.append(try flatten(element, depth: depth + 1)) }
      objects[index] = .array(references)
      return index
    case .dictionary(let dictionary):
      let index = try openContainer(depth)
      var keys = [Int]()
      keys.reserveCapacity(dictionary.count)
      for entry in dictionary.entries {
        keys.append(try flatten(.string(entry.key), depth: depth + 1))
      }
      var values = [Int]()
      values.reserveCapacity(dictionary.count)
      for entry in dictionary.entries { values.append(try flatten(entry.value, depth: depth + 1)) }
      objects[index] = .dictionary(keys: keys, values: values)
      return index
    case .boolean(let flag):
      // Booleans are singletons in CoreFoundation: each occurrence takes a slot (it is appended
      // before the table lookup), but references resolve to the first slot.
      let index = objects.count
      objects.append(.scalar(value))
      if flag {
        if firstTrue == nil { firstTrue = index }
        return firstTrue!
      }
      if firstFalse == nil { firstFalse = index }
      return firstFalse!
    case .uid(let uid):
      guard uid <= UInt64(UInt32.max) else {
        throw PropertyListError(
          .unencodable, "UID \(uid) is above 4294967295, which no reader accepts")
      }
      objects.append(.scalar(value))
      return objects.count - 1
    case .string, .integer, .real, .date, .data:
      let key = UniqueKey(value)!
      if let existing = unique[key] { return existing }
      objects.append(.scalar(value))
      unique[key] = objects.count - 1
      return objects.count - 1
    }
  }

  private mutating func openContainer(_ depth: Int) throws -> Int {
    guard depth < maximumDepth else {
      throw PropertyListError(.unencodable, "value nests deeper than the limit of \(maximumDepth)")
    }
    objects.append(.array([]))
    return objects.count - 1
  }
}

/// The fewest of 1, 2, 4 or 8 bytes that CoreFoundation uses for a count or offset.
func binaryByteCount(_ value: UInt64) -> Int {
  if value <= 0xFF { return 1 }
  if value <= 0xFFFF { return 2 }
  if value <= 0xFFFF_FFFF { return 4 }
  return 8
}

/// The bytes ``BinaryPropertyListObjectTable/encoded()`` writes for single objects, for checks that
/// compare an input with what the writer would make of it.
package enum BinaryObjectEncoding {
  /// Appends a scalar's encoding (anything but an array or a dictionary).
  package static func appendScalar(_ value: PropertyListValue, to out: inout [UInt8]) {
    var emitter = Emitter(referenceSize: 1, capacity: 64)
    emitter.appendScalar(value)
    let written = emitter.out.finish()
    out.append(contentsOf: written)
  }

  /// The fewest of 1, 2, 4 or 8 bytes the writer uses for a count or offset.
  package static func byteCount(_ value: UInt64) -> Int { binaryByteCount(value) }
}

struct Emitter: ~Copyable {
  let referenceSize: Int
  // Written in place: through an array, every byte appended checked uniqueness and capacity.
  var out: OutputBytes

  init(referenceSize: Int, capacity: Int) {
    self.referenceSize = referenceSize
    out = OutputBytes(capacity: capacity)
  }

  /// The binary plist of `objects` with `topObject` at its top.
  static func encode(_ objects: [BinaryPropertyListObjectTable.Object], topObject: Int) -> Data {
    var emitter = Emitter(
      referenceSize: binaryByteCount(UInt64(objects.count)), capacity: 64 + objects.count * 16)
    emitter.out.reserve(8)
    for byte in "bplist00".utf8 { emitter.out.put(byte) }
    var offsets = [Int]()
    offsets.reserveCapacity(objects.count)
    let referenceSize = emitter.referenceSize
    for object in objects {
      offsets.append(emitter.out.count)
      switch object {
      case .scalar(let value): emitter.appendScalar(value)
      case .array(let references):
        emitter.appendMarker(0xA0, count: references.count)
        emitter.appendReferences(references, size: referenceSize)
      case .dictionary(let keys, let values):
        emitter.appendMarker(0xD0, count: keys.count)
        emitter.appendReferences(keys, size: referenceSize)
        emitter.appendReferences(values, size: referenceSize)
      }
    }
    let tableOffset = emitter.out.count
    let offsetSize = binaryByteCount(UInt64(tableOffset))
    emitter.appendReferences(offsets, size: offsetSize)
    emitter.out.reserve(8)
    emitter.out.put(repeating: 0, count: 6)
    emitter.out.put(UInt8(offsetSize))
    emitter.out.put(UInt8(referenceSize))
    emitter.appendSized(UInt64(objects.count), 8)
    emitter.appendSized(UInt64(topObject), 8)
    emitter.appendSized(UInt64(tableOffset), 8)
    return emitter.out.finish()
  }

  /// Each of `references` in `size` big-endian bytes.
  mutating func appendReferences(_ references: [Int], size: Int) {
    let (length, overflow) = references.count.multipliedReportingOverflow(by: size)
    precondition(!overflow, "a table that large cannot be in memory")
    out.append(length) { at in
      for (position, reference) in references.enumerated() {
        Self.store(UInt64(truncatingIfNeeded: reference), size, at: at + position &* size)
      }
    }
  }

  /// `value`'s low `size` bytes (1, 2, 4 or 8), big-endian.
  mutating func appendSized(_ value: UInt64, _ size: Int) {
    out.append(size) { at in Self.store(value, size, at: at) }
  }

  @inline(__always)
  private static func store(_ value: UInt64, _ size: Int, at address: UnsafeMutableRawPointer) {
    switch size {
    case 1: address.storeBytes(of: UInt8(truncatingIfNeeded: value), as: UInt8.self)
    case 2: address.storeBytes(of: UInt16(truncatingIfNeeded: value).bigEndian, as: UInt16.self)
    case 4: address.storeBytes(of: UInt32(truncatingIfNeeded: value).bigEndian, as: UInt32.self)
    default: address.storeBytes(of: value.bigEndian, as: UInt64.self)
    }
  }

  mutating func appendByte(_ byte: UInt8) {
    out.reserve(1)
    out.put(byte)
  }

  /// An integer object in CoreFoundation's width: 1, 2, 4 or 8 bytes by magnitude (negative
  /// values, as unsigned, always take 8).
  mutating func appendInteger(_ bits: UInt64) {
    let size = binaryByteCount(bits)
    appendByte(0x10 | UInt8(size.trailingZeroBitCount))
    appendSized(bits, size)
  }

  mutating func appendMarker(_ marker: UInt8, count: Int) {
    if count < 15 {
      appendByte(marker | UInt8(count))
    } else {
      appendByte(marker | 0x0F)
      appendInteger(UInt64(count))
    }
  }

  mutating func appendScalar(_ value: PropertyListValue) {
    switch value {
    case .boolean(let flag):
      appendByte(flag ? 0x09 : 0x08)
    case .integer(let integer):
      if integer.needsUnsignedStorage {
        appendByte(0x14)
        appendSized(0, 8)
        appendSized(integer.bitPattern, 8)
      } else {
        appendInteger(integer.bitPattern)
      }
    case .real(let real):
      if real.isSinglePrecision {
        appendByte(0x22)
        appendSized(UInt64(Float(real.value).bitPattern), 4)
      } else {
        appendByte(0x23)
        appendSized(real.value.bitPattern, 8)
      }
    case .date(let date):
      appendByte(0x33)
      appendSized(date.timeIntervalSinceReferenceDate.bitPattern, 8)
    case .data(let data):
      appendMarker(0x40, count: data.count)
      out.reserve(data.count)
      data.withUnsafeBytes { out.put($0) }
    case .string(let string):
      string.withUTF8InPlace { utf8 in
        if utf8.allSatisfy({ $0 < 0x80 }) {
          appendMarker(0x50, count: utf8.count)
          out.reserve(utf8.count)
          out.put(UnsafeRawBufferPointer(utf8))
        } else {
          let units = Array(string.utf16)
          appendMarker(0x60, count: units.count)
          out.append(units.count &* 2) { at in
            for (position, unit) in units.enumerated() {
              (at + position &* 2).storeBytes(of: unit.bigEndian, as: UInt16.self)
            }
          }
        }
      }
    case .uid(let uid):
      // CoreFoundation writes UIDs in 1, 2 or 4 bytes; flattening refuses larger ones, but a table
      // built by hand may hold one, and 8 bytes keep it intact rather than truncated.
      let size = uid <= 0xFF ? 1 : uid <= 0xFFFF ? 2 : uid <= 0xFFFF_FFFF ? 4 : 8
      appendByte(0x80 | UInt8(size - 1))
      appendSized(uid, size)
    case .array, .dictionary:
      preconditionFailure("containers are emitted from their flattened form")
    }
  }
}

import PortableFoundation
@_spi(InPlace) import PropertyList

// The check that lets an archive read in place be its own encoding, unflattened and unwritten
// (`LazyKeyedArchive.encoded()`). Its tree twin: decoding the archive, then
// `ArchiverFlattener` (ArchiverFlattener.swift) and the binary writer. Held equal by
// `ResumeDifferential.difference`, which encodes a blob read in place before and after its
// archive is decoded, in Tests/ResumeDataTests/ResumeFastPathTests.swift, and by the fuzz
// harness Fuzz/Sources/FuzzResumeData/main.swift.

extension ArchiverFlattener {
  /// Whether encoding the archive read from `view` (`KeyedArchive(propertyList:)` of its plist,
  /// then `encoded()`, with no class-name sharing read from the bytes) would give back exactly the
  /// bytes the view was read from. Then those bytes are the encoding, and nothing need be decoded,
  /// flattened or written.
  ///
  /// The check walks the plist in the order `State.flatten` does and, for every object it would
  /// append, checks that the input holds that object at that index and position, in the writer's
  /// encoding, and that every reference is the index the flattener would give. It answers false
  /// for anything it does not follow exactly (non-ASCII constants, more than `maximumObjects`
  /// objects): callers then encode as usual.
  static func reproducesBytes(_ view: BinaryPropertyListView) -> Bool {
    let objectCount = view.objectCount
    guard objectCount <= maximumObjectsChecked else { return false }
    // Each list gets an entry only for an object it claims, so none holds more than every object.
    return withUnsafeTemporaryAllocation(
      of: UInt64.self, capacity: max(1, CanonicalCheck.lists * 2 * objectCount)
    ) { memory in
      var check = CanonicalCheck(view, memory: memory.baseAddress!)
      return check.run()
    }
  }

  /// Archives larger than this are encoded rather than checked: the check's lookups are linear.
  static let maximumObjectsChecked = 512
}

/// The state of `ArchiverFlattener.reproducesBytes`: `State` with input indexes in place of built
/// objects.
///
/// Its small helpers are `@inline(__always)`: called, each copied the whole state onto the stack.
private struct CanonicalCheck {
  let plist: BinaryPropertyListView
  // The plist's objects, whose accessors inline (the view's own do not).
  let table: BinaryObjects
  let bytes: UnsafeRawBufferPointer
  let referenceSize: Int
  // The view's layout, read once: its accessors are calls into another module.
  let objectCount: Int
  let objectAreaEnd: Int
  // The index the flattener gives its next object, and where the writer puts it.
  var next = 0
  var position = 8
  // Deduplicated constants and scalars, as input object indexes (each its own first occurrence),
  // in memory of the caller's rather than arrays: no uniqueness checks or reference counting in
  // the walk. Constants are keyed by their length, the others by their bits.
  var keyConstants: FirstOccurrences
  var valueConstants: FirstOccurrences
  var numbers: FirstOccurrences
  var dates: FirstOccurrences
  var uids: FirstOccurrences
  /// How many lists of `FirstOccurrences` the check keeps.
  static let lists = 5
  var firstTrue: Int?
  var firstFalse: Int?
  // A reusable buffer for expected encodings.
  var expected: [UInt8] = []

  /// A check of `plist`, whose lists use `memory`: room for `lists * 2 * objectCount` words.
  init(_ plist: BinaryPropertyListView, memory: UnsafeMutablePointer<UInt64>) {
    table = plist.objects
    self.plist = plist
    bytes = plist.rawBytes
    referenceSize = BinaryObjectEncoding.byteCount(UInt64(plist.objectCount))
    objectCount = plist.objectCount
    objectAreaEnd = plist.offsetTableOffset
    let room = 2 * objectCount
    keyConstants = FirstOccurrences(memory, capacity: objectCount)
    valueConstants = FirstOccurrences(memory + room, capacity: objectCount)
    numbers = FirstOccurrences(memory + 2 * room, capacity: objectCount)
    dates = FirstOccurrences(memory + 3 * room, capacity: objectCount)
    uids = FirstOccurrences(memory + 4 * room, capacity: objectCount)
  }

  mutating func run() -> Bool {
    guard objectCount <= ArchiverFlattener.maximumObjectsChecked,
      plist.isVersion00, plist.topObjectIndex == 0,
      plist.referenceSize == referenceSize,
      plist.offsetSize == BinaryObjectEncoding.byteCount(UInt64(objectAreaEnd)),
      // The writer's trailer starts with six zero bytes (unused and sort version).
      bytes[(bytes.count - 32)..<(bytes.count - 26)].allSatisfy({ $0 == 0 }),
      walk(plist.topObject, isObjectsEntry: false, isObjectsArray: false)
    else { return false }
    // Every object appended, in the order of the offset table, up to it.
    return next == objectCount && position == objectAreaEnd
  }

  // MARK: Appending

  /// Claims the next index for an object the input holds there: `reference` must be it, and its
  /// bytes must start where the previous object's ended.
  @inline(__always)
  private mutating func claim(_ reference: Int) -> Bool {
    guard reference == next, next < objectCount, table.offset(next) == position else {
      return false
    }
    return true
  }

  /// Whether the input holds `expected` at `position`; moves past it to the next object.
  private mutating func matchExpected() -> Bool {
    let count = expected.count
    guard position <= objectAreaEnd - count,
      expected.withUnsafeBytes({ memcmp($0.baseAddress!, bytes.baseAddress! + position, count) })
        == 0
    else { return false }
    position += count
    next += 1
    return true
  }

  /// Appends a scalar read from the input object `reference`, which must be the next index.
  private mutating func appendScalar(_ reference: Int) -> Bool {
    guard claim(reference) else { return false }
    return appendEncoding(of: reference)
  }

  /// Appends the writer's encoding of the scalar object `object` at the next index, wherever the
  /// references point (booleans and UIDs are written once per occurrence).
  private mutating func appendEncoding(of object: Int) -> Bool {
    guard next < objectCount, table.offset(next) == position else { return false }
    // The frequent kinds are compared in place, byte for byte as `Emitter.appendScalar` writes
    // them; the rest go through the writer itself.
    let length: Int?
    switch table.kind(object) {
    case .uid:
      let uid = table.uid(object)
      if uid <= 0xFF {
        // What archives hold for their first 256 objects: marker and byte, in one comparison.
        guard position < objectAreaEnd &- 1,
          bytes.loadUnaligned(fromByteOffset: position, as: UInt16.self)
            == UInt16(0x80 | uid << 8).littleEndian
        else { return false }
        length = 2
      } else {
        let size = uid <= 0xFFFF ? 2 : uid <= 0xFFFF_FFFF ? 4 : 8
        length = holds(0x80 | UInt8(size - 1), uid, size: size, at: position) ? 1 + size : nil
      }
    case .boolean:
      length = holds(table.boolean(object) ? 0x09 : 0x08, 0, size: 0, at: position) ? 1 : nil
    case .integer:
      let integer = table.integer(object)
      if integer.needsUnsignedStorage {
        length =
          holds(0x14, 0, size: 8, at: position)
            && holds(0, integer.bitPattern, size: 8, at: position + 8) ? 17 : nil
      } else {
        length = integerLength(integer.bitPattern, at: position)
      }
    case .string where table.asciiBytes(object) != nil:
      // ASCII text is written as it is: only the marker and count can differ, when the object
      // is the one the input holds here.
      let count = table.count(object)
      length =
        object == next ? markerLength(0x50, count: count, at: position).map { $0 + count } : nil
    case .data:
      let count = table.count(object)
      length =
        object == next ? markerLength(0x40, count: count, at: position).map { $0 + count } : nil
    default:
      guard let value = plist.scalar(object) else { return false }
      expected.removeAll(keepingCapacity: true)
      BinaryObjectEncoding.appendScalar(value, to: &expected)
      return matchExpected()
    }
    guard let length, position <= objectAreaEnd - length else { return false }
    position += length
    next += 1
    return true
  }

  /// Whether the input holds, at `offset`, the byte `marker` followed by `value` in `size`
  /// big-endian bytes (`Emitter.appendSized`), inside the object area.
  @inline(__always)
  private func holds(_ marker: UInt8, _ value: UInt64, size: Int, at offset: Int) -> Bool {
    guard offset >= 0, offset < objectAreaEnd - size, bytes[offset] == marker else {
      return false
    }
    var shift = (size - 1) * 8
    for index in (offset + 1)..<(offset + 1 + size) {
      guard bytes[index] == UInt8(truncatingIfNeeded: value >> UInt64(shift)) else { return false }
      shift -= 8
    }
    return true
  }

  /// The length of `Emitter.appendInteger(bits)` when the input holds it at `offset`.
  @inline(__always)
  private func integerLength(_ bits: UInt64, at offset: Int) -> Int? {
    let size = BinaryObjectEncoding.byteCount(bits)
    return holds(0x10 | UInt8(size.trailingZeroBitCount), bits, size: size, at: offset)
      ? 1 + size : nil
  }

  /// The length of `Emitter.appendMarker(marker, count:)` when the input holds it at `offset`.
  @inline(__always)
  private func markerLength(_ marker: UInt8, count: Int, at offset: Int) -> Int? {
    if count < 15 { return holds(marker | UInt8(count), 0, size: 0, at: offset) ? 1 : nil }
    guard holds(marker | 0x0F, 0, size: 0, at: offset),
      let integer = integerLength(UInt64(count), at: offset + 1)
    else { return nil }
    return 1 + integer
  }

  /// Appends a container's marker and count; its references are checked as its children are.
  private mutating func appendContainer(_ reference: Int, marker: UInt8, references: Int) -> Bool {
    guard claim(reference),
      let header = markerLength(marker, count: table.count(reference), at: position)
    else { return false }
    let (size, overflow) = references.multipliedReportingOverflow(by: referenceSize)
    guard !overflow, position <= objectAreaEnd - header - size else { return false }
    position += header + size
    next += 1
    return true
  }

  // MARK: The flattener's walk

  /// `State.flatten` of the object `reference` names: whether it gives that index.
  private mutating func walk(_ reference: Int, isObjectsEntry: Bool, isObjectsArray: Bool) -> Bool {
    switch table.kind(reference) {
    case .string:
      if isObjectsEntry { return appendScalar(reference) }
      return constant(reference, isKey: false)
    case .integer:
      let integer = table.integer(reference)
      return number(
        reference, bits: integer.bitPattern, kind: integer.needsUnsignedStorage ? 1 : 0)
    case .real:
      let value = table.real(reference).value
      return number(
        reference, bits: value.isNaN ? Double.nan.bitPattern : value == 0 ? 0 : value.bitPattern,
        kind: 2)
    case .date:
      guard case .date(let date)? = plist.scalar(reference) else { return false }
      let bits = date.timeIntervalSinceReferenceDate.bitPattern
      if let first = dates.first(bits) { return first == reference }
      return dates.append(bits, next) && appendScalar(reference)
    case .data:
      return appendScalar(reference)
    case .boolean:
      // Every occurrence is written; references resolve to the first.
      let flag = table.boolean(reference)
      let first = (flag ? firstTrue : firstFalse) ?? next
      if flag { firstTrue = first } else { firstFalse = first }
      return first == reference && appendEncoding(of: reference)
    case .uid:
      let uid = table.uid(reference)
      let first = uids.first(uid) ?? next
      if first == next, !uids.append(uid, next) { return false }
      return first == reference && appendEncoding(of: reference)
    case .array:
      let count = table.count(reference)
      guard appendContainer(reference, marker: 0xA0, references: count) else { return false }
      for position in 0..<count
      where !walk(
        table.element(reference, position), isObjectsEntry: isObjectsArray,
        isObjectsArray: false)
      {
        return false
      }
      return true
    case .dictionary:
      return dictionary(reference, isObjectsEntry: isObjectsEntry)
    }
  }

  private mutating func dictionary(_ reference: Int, isObjectsEntry: Bool) -> Bool {
    let count = table.count(reference)
    let (references, overflow) = count.multipliedReportingOverflow(by: 2)
    guard !overflow, appendContainer(reference, marker: 0xD0, references: references) else {
      return false
    }
    let isTopLevel = reference == 0
    for position in 0..<count where !constant(table.key(reference, position), isKey: true) {
      return false
    }
    var unsharedClassName: Int?
    if isObjectsEntry, let name = table.value(reference, forKey: "$classname"),
      table.isKind(name, .string), table.value(reference, forKey: "$classes") != nil,
      !ArchiverFlattener.sharedClassNames.contains(table.string(name))
    {
      unsharedClassName = name
    }
    for position in 0..<count {
      let key = table.key(reference, position)
      let value = table.value(reference, position)
      if let name = unsharedClassName, table.isString(key, equalTo: "$classname") {
        // A class name of its own, not the constant.
        guard value == name, appendScalar(value) else { return false }
        continue
      }
      guard
        walk(
          value, isObjectsEntry: false,
          isObjectsArray: isTopLevel && table.isString(key, equalTo: "$objects"))
      else { return false }
    }
    return true
  }

  /// `State.constant`: strings shared by their text, keys apart from values. Only ASCII text is
  /// followed (Swift's string equality, which the flattener's lookup uses, is then byte equality).
  private mutating func constant(_ reference: Int, isKey: Bool) -> Bool {
    guard let text = table.asciiBytes(reference) else { return false }
    if let first = firstConstant(equalTo: text, in: isKey ? keyConstants : valueConstants) {
      return first == reference
    }
    let length = UInt64(text.count)
    let appended =
      isKey
      ? keyConstants.append(length, reference) : valueConstants.append(length, reference)
    return appended && appendScalar(reference)
  }

  private func firstConstant(equalTo text: UnsafeRawBufferPointer, in known: FirstOccurrences)
    -> Int?
  {
    let length = UInt64(text.count)
    for entry in 0..<known.count where known.key(entry) == length {
      let first = known.index(entry)
      guard let other = table.asciiBytes(first),
        memcmp(other.baseAddress!, text.baseAddress!, text.count) == 0
      else { continue }
      return first
    }
    return nil
  }

  /// `State.number`: integers and reals shared by value and kind.
  private mutating func number(_ reference: Int, bits: UInt64, kind: UInt64) -> Bool {
    if let first = numbers.first(bits, tag: kind) { return first == reference }
    return numbers.append(bits, next, tag: kind) && appendScalar(reference)
  }
}

/// The first occurrences of values: each a key (a value's bits, or a constant's length), a tag
/// (a number's kind) and the object index it was given, in memory the check provides.
private struct FirstOccurrences {
  let keys: UnsafeMutablePointer<UInt64>
  // Each entry's index shifted left twice, its tag in the two low bits.
  let values: UnsafeMutablePointer<UInt64>
  let capacity: Int
  private(set) var count = 0

  /// A list in `memory`, which has room for `2 * capacity` words.
  init(_ memory: UnsafeMutablePointer<UInt64>, capacity: Int) {
    keys = memory
    values = memory + capacity
    self.capacity = capacity
  }

  /// The key of the list's `entry`th first occurrence.
  func key(_ entry: Int) -> UInt64 { keys[entry] }

  /// The index given to the list's `entry`th first occurrence.
  func index(_ entry: Int) -> Int { Int(truncatingIfNeeded: values[entry] >> 2) }

  /// The index given to the first occurrence of `key` with `tag` (0 to 3), if there is one.
  func first(_ key: UInt64, tag: UInt64 = 0) -> Int? {
    for entry in 0..<count where keys[entry] == key && values[entry] & 3 == tag {
      return index(entry)
    }
    return nil
  }

  /// Records the first occurrence of `key` with `tag`, given `index`; false when the list is full
  /// (which a walk that claims each object once never makes it, but a bound is kept all the same).
  mutating func append(_ key: UInt64, _ index: Int, tag: UInt64 = 0) -> Bool {
    guard count < capacity else { return false }
    keys[count] = key
    values[count] = UInt64(truncatingIfNeeded: index) << 2 | tag
    count &+= 1
    return true
  }
}

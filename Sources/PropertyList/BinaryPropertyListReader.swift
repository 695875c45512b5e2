import CVectorLoops
import PortableFoundation

/// Reads Apple binary property lists (`bplist00`).
///
/// The whole structure is validated before any object is read: the trailer's sizes, counts and
/// table position must be consistent with the input's length, and every offset-table entry must
/// point into the object area. Sizes taken from the input are checked for overflow and against the
/// input's length before anything is allocated, references must be in range, and an object that
/// contains itself is refused. Every error carries the byte offset at which the problem was found.
public struct BinaryPropertyListReader: Sendable {
  /// The bounds the reader enforces.
  public var limits: PropertyListLimits

  /// Creates a reader.
  public init(limits: PropertyListLimits = .default) {
    self.limits = limits
  }

  /// Reads a binary property list.
  ///
  /// - Parameter bytes: the whole input, starting with `bplist0`.
  /// - Returns: the top-level value.
  /// - Throws: ``PropertyListError`` with the byte offset of the problem.
  public func read(_ bytes: Data) throws -> PropertyListValue {
    guard bytes.count <= limits.maximumInputSize else {
      throw PropertyListError(
        .limitExceeded,
        "input of \(bytes.count) bytes exceeds the limit of \(limits.maximumInputSize)")
    }
    return try bytes.withUnsafeBytes { buffer in
      var parser = try BinaryParser<ValueBuilder>(buffer, limits: limits)
      return try parser.readTop()
    }
  }

  /// Reads a binary property list from raw bytes.
  ///
  /// - Parameter buffer: the whole input, starting with `bplist0`.
  /// - Returns: the top-level value.
  /// - Throws: ``PropertyListError`` with the byte offset of the problem.
  public func read(_ buffer: UnsafeRawBufferPointer) throws -> PropertyListValue {
    guard buffer.count <= limits.maximumInputSize else {
      throw PropertyListError(
        .limitExceeded,
        "input of \(buffer.count) bytes exceeds the limit of \(limits.maximumInputSize)")
    }
    var parser = try BinaryParser<ValueBuilder>(buffer, limits: limits)
    return try parser.readTop()
  }
}

/// The trailer's fields, as read and validated.
struct BinaryTrailer {
  var offsetIntSize: Int
  var objectRefSize: Int
  var objectCount: Int
  var topObject: Int
  var offsetTableOffset: Int
}

// Noncopyable so that it can own its per-object storage outright: plain pointers, not arrays,
// spare the hot path the arrays' bounds and uniqueness checks.
//
// Generic over what it makes of the objects, so that every check is written once: `ValueBuilder`
// builds `PropertyListValue`s, `SpanBuilder` builds nothing but what a reader of the bytes in place
// needs (see `BinaryPropertyListView`). Both are specialized, and the checks, the order they run in
// and therefore the errors are the same whichever builder runs.
struct BinaryParser<Builder: BinaryPlistBuilder & ~Copyable>: ~Copyable {
  let bytes: UnsafeRawBufferPointer
  let limits: PropertyListLimits
  let trailer: BinaryTrailer
  let area: BinaryObjectArea
  // Built objects by index, so a shared object is built once (exponential sharing stays linear)
  // and CoreFoundation's uniquing is mirrored as shared values. An entry is initialized exactly when
  // its `expandedSize` is positive, which spares every lookup an Optional's copy and check.
  let cache: UnsafeMutablePointer<Builder.Value>
  // How many values each read object stands for once shared references are expanded, so that a
  // plist whose objects reference each other exponentially is refused instead of handing callers a
  // value too large to walk; -1 while the object is being read, so that meeting it again means the
  // plist contains a cycle.
  let expandedSize: UnsafeMutablePointer<Int>
  // Each object's offset, decoded from the offset table once (validation reads it anyway).
  let offsets: UnsafeMutablePointer<Int>
  // One word per object for a pass's own use (the one-pass scan keeps key fingerprints in it);
  // uninitialized until that pass initializes it.
  let scratch: UnsafeMutablePointer<UInt64>
  var builder: Builder
  var depth = 0
  var visited = 0

  init(_ bytes: UnsafeRawBufferPointer, limits: PropertyListLimits) throws {
    self.bytes = bytes
    self.limits = limits
    let trailer = try Self.validate(bytes, limits: limits)
    // The per-object arrays in one block: the sizes, the offsets and the scratch words, then the
    // cache. The object count was validated against the input's length, so the block is sized by
    // the input. A block the thread reuses (`ReusableBlocks`) rather than `allocate`, which on
    // Linux takes the slower aligned path; its alignment (16 bytes) suits every builder's values
    // (pointers and words).
    let count = trailer.objectCount
    let wordBytes = 3 * count * MemoryLayout<Int>.stride
    guard
      let block = ReusableBlocks.take(wordBytes + count * MemoryLayout<Builder.Value>.stride)
    else {
      throw PropertyListError(
        .limitExceeded, "no memory for the \(count) objects", at: .offset(bytes.count - 24))
    }
    let sizes = block.bindMemory(to: Int.self, capacity: 2 * count)
    do {
      // Checked and decoded in one pass (validation reads every entry anyway).
      try Self.readOffsets(bytes, trailer, into: sizes + count)
    } catch {
      ReusableBlocks.give(block)
      throw error
    }
    self.trailer = trailer
    area = BinaryObjectArea(
      bytes: bytes, objectAreaEnd: trailer.offsetTableOffset,
      maximumValueLength: limits.maximumValueLength)
    expandedSize = sizes
    expandedSize.initialize(repeating: 0, count: count)
    offsets = sizes + count
    scratch = (block + 2 * count * MemoryLayout<Int>.stride).bindMemory(
      to: UInt64.self, capacity: count)
    cache = (block + wordBytes).bindMemory(to: Builder.Value.self, capacity: count)
    builder = Builder(bytes: bytes, objectCount: count)
  }

  deinit {
    for index in 0..<trailer.objectCount where expandedSize[index] > 0 {
      (cache + index).deinitialize(count: 1)
    }
    ReusableBlocks.give(UnsafeMutableRawPointer(expandedSize))
  }

  // MARK: Structure

  static func validate(_ bytes: UnsafeRawBufferPointer, limits: PropertyListLimits) throws
    -> BinaryTrailer
  {
    let length = bytes.count
    // Header (8) + at least one one-byte object + trailer (32).
    guard length >= 8 + 1 + 32 else {
      throw PropertyListError(
        .truncated, "binary property list of \(length) bytes is shorter than the 41-byte minimum",
        at: .offset(length))
    }
    guard BinaryBytes.hasPrefix(bytes, "bplist0") else {
      throw PropertyListError(.malformed, "missing bplist0 header", at: .offset(0))
    }
    let trailerStart = length - 32
    let offsetIntSize = Int(bytes[trailerStart + 6])
    let objectRefSize = Int(bytes[trailerStart + 7])
    let objectCount64 = readUInt64(bytes, trailerStart + 8)
    let topObject64 = readUInt64(bytes, trailerStart + 16)
    let tableOffset64 = readUInt64(bytes, trailerStart + 24)
    // Every writer leaves the trailer's first six bytes zero (five unused, and the sort version):
    // where they are not, the last 32 bytes are no trailer at all, most often because the file
    // was cut short, which says more than the first field that fails.
    func trailerError(_ message: String, at offset: Int) -> PropertyListError {
      let looksCutShort = (trailerStart..<(trailerStart + 6)).contains { bytes[$0] != 0 }
      let hint = looksCutShort ? " (no trailer in the last 32 bytes: a file cut short?)" : ""
      return PropertyListError(.malformed, message + hint, at: .offset(offset))
    }

    guard (1...8).contains(offsetIntSize) else {
      throw trailerError(
        "trailer offset size \(offsetIntSize) is not 1 to 8 bytes",
        at: trailerStart + 6)
    }
    guard (1...8).contains(objectRefSize) else {
      throw trailerError(
        "trailer reference size \(objectRefSize) is not 1 to 8 bytes",
        at: trailerStart + 7)
    }
    guard objectCount64 >= 1 else {
      throw trailerError("trailer declares no objects", at: trailerStart + 8)
    }
    guard topObject64 < objectCount64 else {
      throw trailerError(
        "top object \(topObject64) is not below the object count \(objectCount64)",
        at: trailerStart + 16)
    }
    guard tableOffset64 >= 9, tableOffset64 < UInt64(trailerStart) else {
      throw trailerError(
        "offset table position \(tableOffset64) is outside the object area 9..<\(trailerStart)",
        at: trailerStart + 24)
    }
    // The table must fill the space between its start and the trailer exactly, as CoreFoundation requires.
    let (tableSize, overflow) = objectCount64.multipliedReportingOverflow(by: UInt64(offsetIntSize))
    guard !overflow, tableSize == UInt64(trailerStart) - tableOffset64 else {
      throw trailerError(
        "trailer declares \(objectCount64) objects of \(offsetIntSize)-byte offsets, which does not fit the "
          + "\(UInt64(trailerStart) - tableOffset64) bytes between the offset table and the trailer",
        at: trailerStart + 8)
    }
    let objectCount = Int(objectCount64)
    guard objectCount <= limits.maximumObjectCount else {
      throw PropertyListError(
        .limitExceeded, "\(objectCount) objects exceed the limit of \(limits.maximumObjectCount)",
        at: .offset(trailerStart + 8))
    }
    if objectRefSize < 8, UInt64(1) << UInt64(8 * objectRefSize) <= objectCount64 {
      throw trailerError(
        "\(objectRefSize)-byte references cannot address \(objectCount) objects",
        at: trailerStart + 7)
    }
    if offsetIntSize < 8, UInt64(1) << UInt64(8 * offsetIntSize) <= tableOffset64 {
      throw trailerError(
        "\(offsetIntSize)-byte offsets cannot address the offset table at \(tableOffset64)",
        at: trailerStart + 6)
    }
    return BinaryTrailer(
      offsetIntSize: offsetIntSize, objectRefSize: objectRefSize, objectCount: objectCount,
      topObject: Int(topObject64), offsetTableOffset: Int(tableOffset64))
  }

  /// Checks every entry of the offset table of a validated trailer, in order, and stores it.
  static func readOffsets(
    _ bytes: UnsafeRawBufferPointer, _ trailer: BinaryTrailer,
    into offsets: UnsafeMutablePointer<Int>
  ) throws {
    let tableOffset = trailer.offsetTableOffset
    let count = trailer.objectCount
    let width = trailer.offsetIntSize
    // Every object offset must point into the object area, after the header, before the table:
    // one unsigned comparison checks both ends. The trailer was validated: the table lies inside
    // the input.
    let limit = UInt64(tableOffset &- 8)
    func entry(_ index: Int) -> UInt64 {
      readSizedUInt(bytes, tableOffset &+ index &* width, width)
    }
    // The widths writers use for files up to 64 KiB, in vectors (C); wider tables here.
    var outside = Int32(-1)
    if width <= 2 {
      outside = offsets.withMemoryRebound(to: Int64.self, capacity: count) {
        cvl_read_offsets(
          bytes.baseAddress!.assumingMemoryBound(to: UInt8.self) + tableOffset, count, width,
          limit, $0)
      }
    }
    if outside == -1 {
      outside = 0
      for index in 0..<count {
        let offset = entry(index)
        if offset &- 8 >= limit { outside = 1 }
        offsets[index] = Int(truncatingIfNeeded: offset)
      }
    }
    guard outside == 1 else { return }
    // The first entry outside, for the error.
    for index in 0..<count where entry(index) &- 8 >= limit {
      throw PropertyListError(
        .malformed,
        "offset-table entry \(entry(index)) is outside the object area 8..<\(tableOffset)",
        at: .offset(tableOffset &+ index &* width))
    }
  }

  @inline(__always)
  static func readUInt64(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> UInt64 {
    BinaryBytes.readUInt64(bytes, at)
  }

  @inline(__always)
  static func readSizedUInt(_ bytes: UnsafeRawBufferPointer, _ at: Int, _ size: Int) -> UInt64 {
    BinaryBytes.readSizedUInt(bytes, at, size)
  }

  @inline(__always)
  func objectOffset(_ index: Int) -> Int {
    offsets[index]
  }

  // MARK: Objects

  mutating func readTop() throws -> Builder.Value {
    try readObject(trailer.topObject, referencedAt: bytes.count - 16)
  }

  mutating func readObject(_ index: Int, referencedAt: Int) throws -> Builder.Value {
    let size = expandedSize[index]
    if size > 0 {
      try countVisits(size, at: referencedAt)
      return cache[index]
    }
    guard size == 0 else {
      throw PropertyListError(
        .cycle, "object \(index) contains itself (reference cycle)", at: .offset(referencedAt))
    }
    let offset = objectOffset(index)
    let marker = bytes[offset]
    let visitedBefore = visited
    let value: Builder.Value
    switch marker >> 4 {
    case 0x0:
      switch marker {
      case 0x08: value = builder.boolean(false)
      case 0x09: value = builder.boolean(true)
      case 0x00:
        throw PropertyListError(
          .malformed, "null object (marker 0x00) is not a property-list value", at: .offset(offset))
      default:
        throw PropertyListError(
          .malformed, "unknown object marker \(hex(marker))", at: .offset(offset))
      }
    case 0x1:
      value = builder.integer(try area.readInteger(at: offset, marker: marker))
    case 0x2:
      switch marker & 0x0F {
      case 2:
        try area.need(offset + 1, 4, "4-byte real")
        let bits = UInt32(
          bigEndian: bytes.loadUnaligned(fromByteOffset: offset + 1, as: UInt32.self))
        value = builder.real(PropertyListReal(Float(bitPattern: bits)))
      case 3:
        try area.need(offset + 1, 8, "8-byte real")
        value = builder.real(
          PropertyListReal(Double(bitPattern: Self.readUInt64(bytes, offset + 1))))
      default:
        throw PropertyListError(
          .malformed, "real of \(1 << Int(marker & 0x0F)) bytes is not 4 or 8 bytes",
          at: .offset(offset))
      }
    case 0x3:
      guard marker == 0x33 else {
        throw PropertyListError(
          .malformed, "date marker \(hex(marker)) is not 0x33", at: .offset(offset))
      }
      try area.need(offset + 1, 8, "date")
      value = builder.date(Double(bitPattern: Self.readUInt64(bytes, offset + 1)))
    case 0x4:
      let (count, start) = try area.readCount(at: offset, marker: marker)
      try area.need(start, count, "data of \(count) bytes", lengthLimited: true)
      value = builder.data(UnsafeRawBufferPointer(rebasing: bytes[start..<(start + count)]))
    case 0x5:
      let (count, start) = try area.readCount(at: offset, marker: marker)
      try area.need(start, count, "ASCII string of \(count) bytes", lengthLimited: true)
      let slice = UnsafeRawBufferPointer(rebasing: bytes[start..<(start + count)])
      if !Self.isASCII(slice), let bad = slice.firstIndex(where: { $0 >= 0x80 }) {
        throw PropertyListError(
          .invalidValue, "ASCII string holds the non-ASCII byte \(hex(slice[bad]))",
          at: .offset(start + bad))
      }
      value = builder.asciiString(slice)
    case 0x6:
      let (count, start) = try area.readCount(at: offset, marker: marker)
      let (byteCount, overflow) = count.multipliedReportingOverflow(by: 2)
      guard !overflow else {
        throw PropertyListError(
          .malformed, "UTF-16 string length \(count) overflows", at: .offset(offset))
      }
      try area.need(start, byteCount, "UTF-16 string of \(count) units", lengthLimited: true)
      try area.checkUTF16(start: start, count: count)
      value = builder.utf16String(
        UnsafeRawBufferPointer(rebasing: bytes[start..<(start + byteCount)]))
    case 0x8:
      let size = Int(marker & 0x0F) + 1
      try area.need(offset + 1, size, "\(size)-byte UID")
      // UIDs longer than 8 bytes must still hold a 64-bit value: their leading bytes must be zero.
      if size > 8,
        let nonzero = (offset + 1..<offset + 1 + size - 8).first(where: { bytes[$0] != 0 })
      {
        throw PropertyListError(
          .invalidValue, "\(size)-byte UID does not fit in 64 bits", at: .offset(nonzero))
      }
      let uid = Self.readSizedUInt(bytes, offset + 1 + max(0, size - 8), min(size, 8))
      // CoreFoundation's reader refuses UIDs above UInt32.max, and XML's CF$UID cannot hold them.
      guard uid <= UInt64(UInt32.max) else {
        throw PropertyListError(
          .invalidValue, "UID \(uid) is above 4294967295", at: .offset(offset + 1))
      }
      value = builder.uid(uid)
    case 0xA:
      value = try readArray(index, at: offset, marker: marker)
    case 0xD:
      value = try readDictionary(index, at: offset, marker: marker)
    case 0xB, 0xC:
      throw PropertyListError(
        .malformed,
        "set or ordered-set object (marker \(hex(marker))) is not a property-list value",
        at: .offset(offset))
    default:
      throw PropertyListError(
        .malformed, "unknown object marker \(hex(marker))", at: .offset(offset))
    }
    try countVisits(1, at: offset)
    // Numbers, booleans, dates and UIDs are cheaper to read again than to cache; strings, data and
    // containers are cached so that shared ones are built (and stored) once.
    switch marker >> 4 {
    case 0x4, 0x5, 0x6, 0xA, 0xD:
      (cache + index).initialize(to: value)
      expandedSize[index] = visited - visitedBefore
    default:
      break
    }
    return value
  }

  /// Whether every byte is below 0x80, 32 then 8 at a time.
  @inline(__always)
  static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
    let count = bytes.count
    guard let base = bytes.baseAddress else { return true }
    var high: UInt64 = 0
    if count >= 8 {
      var index = 0
      while index &+ 32 <= count {
        high |=
          base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
          | base.loadUnaligned(fromByteOffset: index &+ 8, as: UInt64.self)
          | base.loadUnaligned(fromByteOffset: index &+ 16, as: UInt64.self)
          | base.loadUnaligned(fromByteOffset: index &+ 24, as: UInt64.self)
        index &+= 32
      }
      while index &+ 8 <= count {
        high |= base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
        index &+= 8
      }
      // The last eight bytes, overlapping what was read: the tail without a loop.
      high |= base.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self)
    } else if count >= 4 {
      high = UInt64(
        base.loadUnaligned(as: UInt32.self)
          | base.loadUnaligned(fromByteOffset: count &- 4, as: UInt32.self))
    } else {
      for byte in bytes { high |= UInt64(byte) }
    }
    return high & 0x8080_8080_8080_8080 == 0
  }

  @inline(__always)
  mutating func countVisits(_ count: Int, at offset: Int) throws {
    visited += count
    guard visited <= limits.maximumVisitedElements else {
      throw PropertyListError(
        .limitExceeded,
        "the plist expands to more than \(limits.maximumVisitedElements) values through shared references",
        at: .offset(offset))
    }
  }

  /// Reads a reference and checks that it names an object.
  @inline(__always)
  func reference(at position: Int) throws -> Int {
    let raw = Self.readSizedUInt(bytes, position, trailer.objectRefSize)
    guard raw < UInt64(trailer.objectCount) else {
      throw PropertyListError(
        .malformed, "reference \(raw) is not below the object count \(trailer.objectCount)",
        at: .offset(position))
    }
    return Int(raw)
  }

  mutating func enter(_ index: Int, at offset: Int) throws {
    depth += 1
    guard depth <= limits.maximumDepth else {
      throw PropertyListError(
        .limitExceeded, "nesting deeper than the limit of \(limits.maximumDepth)",
        at: .offset(offset))
    }
    expandedSize[index] = -1
  }

  mutating func leave(_ index: Int) {
    depth -= 1
    expandedSize[index] = 0
  }

  mutating func readArray(_ index: Int, at offset: Int, marker: UInt8) throws -> Builder.Value {
    let (count, start) = try area.readCount(at: offset, marker: marker)
    let (byteCount, overflow) = count.multipliedReportingOverflow(by: trailer.objectRefSize)
    guard !overflow else {
      throw PropertyListError(.malformed, "array length \(count) overflows", at: .offset(offset))
    }
    try area.need(start, byteCount, "array of \(count) references")
    try enter(index, at: offset)
    var elements = builder.beginArray(count: count, start: start)
    var position = start
    for _ in 0..<count {
      let element = try readObject(try reference(at: position), referencedAt: position)
      builder.append(element, to: &elements)
      position += trailer.objectRefSize
    }
    leave(index)
    return builder.endArray(elements)
  }

  mutating func readDictionary(_ index: Int, at offset: Int, marker: UInt8) throws
    -> Builder.Value
  {
    let (count, start) = try area.readCount(at: offset, marker: marker)
    let (byteCount, overflow) = count.multipliedReportingOverflow(by: 2 * trailer.objectRefSize)
    guard !overflow else {
      throw PropertyListError(
        .malformed, "dictionary length \(count) overflows", at: .offset(offset))
    }
    try area.need(start, byteCount, "dictionary of \(count) entries")
    try enter(index, at: offset)
    var dictionary = builder.beginDictionary(count: count, start: start)
    let valuesStart = start + count * trailer.objectRefSize
    for entry in 0..<count {
      let keyPosition = start + entry * trailer.objectRefSize
      let keyIndex = try reference(at: keyPosition)
      let key = try readObject(keyIndex, referencedAt: keyPosition)
      // Only ASCII (0x5) and UTF-16 (0x6) objects read as strings.
      let keyKind = bytes[objectOffset(keyIndex)] >> 4
      guard keyKind == 0x5 || keyKind == 0x6 else {
        throw PropertyListError(
          .malformed, "dictionary key (object \(keyIndex)) is not a string",
          at: .offset(keyPosition))
      }
      let valuePosition = valuesStart + entry * trailer.objectRefSize
      let value = try readObject(try reference(at: valuePosition), referencedAt: valuePosition)
      builder.addEntry(
        key: key, keyObject: keyIndex, keyIsASCII: keyKind == 0x5, value: value, to: &dictionary)
    }
    leave(index)
    return builder.endDictionary(dictionary)
  }
}

extension BinaryParser where Builder: ~Copyable, Builder == ValueBuilder {
  /// Every object of the file in index order; call after `readTop` has validated the reachable
  /// graph.
  mutating func readTable() throws -> BinaryPropertyListObjectTable {
    var objects = [BinaryPropertyListObjectTable.Object]()
    objects.reserveCapacity(trailer.objectCount)
    for index in 0..<trailer.objectCount {
      let offset = objectOffset(index)
      let marker = bytes[offset]
      switch marker >> 4 {
      case 0xA:
        let (count, start) = try area.readCount(at: offset, marker: marker)
        try area.need(start, count &* trailer.objectRefSize, "array of \(count) references")
        objects.append(
          .array(try (0..<count).map { try reference(at: start + $0 * trailer.objectRefSize) }))
      case 0xD:
        let (count, start) = try area.readCount(at: offset, marker: marker)
        try area.need(start, count &* 2 &* trailer.objectRefSize, "dictionary of \(count) entries")
        let references = try (0..<(2 * count)).map {
          try reference(at: start + $0 * trailer.objectRefSize)
        }
        objects.append(
          .dictionary(keys: Array(references[..<count]), values: Array(references[count...])))
      default:
        // Objects nothing references were not read by `readTop`; read them now (they are scalars).
        objects.append(.scalar(try readObject(index, referencedAt: offset)))
      }
    }
    return BinaryPropertyListObjectTable(objects: objects, topObject: trailer.topObject)
  }
}

/// The object area of a binary plist (from the start of the input to the offset table) and the
/// reads that check their sizes against it. Small and copyable, apart from the parser, so that
/// calling these reads does not copy the parser's state.
struct BinaryObjectArea {
  let bytes: UnsafeRawBufferPointer
  /// Where the offset table starts: the end of the object area.
  let objectAreaEnd: Int
  let maximumValueLength: Int

  /// Checks that `count` bytes from `start` lie inside the object area.
  @inline(__always)
  func need(
    _ start: Int, _ count: Int, _ what: @autoclosure () -> String, lengthLimited: Bool = false
  ) throws {
    if lengthLimited, count > maximumValueLength {
      throw PropertyListError(
        .limitExceeded, "\(what()) exceeds the value-length limit of \(maximumValueLength)",
        at: .offset(start))
    }
    let (end, overflow) = start.addingReportingOverflow(count)
    guard !overflow, end <= objectAreaEnd else {
      throw PropertyListError(
        .truncated,
        "\(what()) at \(start) runs past the object area, which ends at \(objectAreaEnd)",
        at: .offset(start))
    }
  }

  func readInteger(at offset: Int, marker: UInt8) throws -> PropertyListInteger {
    let exponent = Int(marker & 0x0F)
    guard exponent <= 4 else {
      throw PropertyListError(
        .malformed, "integer of 2^\(exponent) bytes is not 1, 2, 4, 8 or 16 bytes",
        at: .offset(offset))
    }
    let size = 1 << exponent
    try need(offset + 1, size, "\(size)-byte integer")
    switch size {
    case 8:
      return PropertyListInteger(Int64(bitPattern: BinaryBytes.readUInt64(bytes, offset + 1)))
    case 16:
      // CoreFoundation writes values above Int64.max as 16 bytes with a zero high half; a high half
      // of all ones is a sign-extended negative. Anything else needs 128 bits.
      let high = BinaryBytes.readUInt64(bytes, offset + 1)
      let low = BinaryBytes.readUInt64(bytes, offset + 9)
      if high == 0 { return PropertyListInteger(low) }
      if high == UInt64.max, low >= 1 << 63 { return PropertyListInteger(Int64(bitPattern: low)) }
      throw PropertyListError(
        .invalidValue, "16-byte integer does not fit in Int64 or UInt64", at: .offset(offset + 1))
    default:
      // 1-, 2- and 4-byte integers are unsigned.
      return PropertyListInteger(BinaryBytes.readSizedUInt(bytes, offset + 1, size))
    }
  }

  /// Reads the element count that follows a marker: the low nibble, or, when it is 0xF, an integer
  /// object.
  func readCount(at offset: Int, marker: UInt8) throws -> (count: Int, start: Int) {
    let nibble = Int(marker & 0x0F)
    if nibble != 0x0F { return (nibble, offset + 1) }
    try need(offset + 1, 1, "length integer")
    let intMarker = bytes[offset + 1]
    guard intMarker >> 4 == 0x1 else {
      throw PropertyListError(
        .malformed,
        "length of the object is introduced by \(hex(intMarker)), not an integer marker",
        at: .offset(offset + 1))
    }
    let exponent = Int(intMarker & 0x0F)
    guard exponent <= 3 else {
      throw PropertyListError(
        .malformed, "length integer of 2^\(exponent) bytes is not 1, 2, 4 or 8 bytes",
        at: .offset(offset + 1))
    }
    let size = 1 << exponent
    try need(offset + 2, size, "length integer")
    let raw = BinaryBytes.readSizedUInt(bytes, offset + 2, size)
    // Any length the object area could hold fits in Int; larger ones are reported as running past it.
    guard raw <= UInt64(objectAreaEnd) else {
      throw PropertyListError(
        .truncated,
        "length \(raw) runs past the object area, which ends at \(objectAreaEnd)",
        at: .offset(offset + 1))
    }
    return (Int(raw), offset + 2 + size)
  }

  /// Checks that `count` big-endian UTF-16 units from `start` pair their surrogates, so that a lone
  /// surrogate is an error rather than a silent U+FFFD.
  func checkUTF16(start: Int, count: Int) throws {
    var index = 0
    while index < count {
      let unit = UInt16(
        bigEndian: bytes.loadUnaligned(fromByteOffset: start + 2 * index, as: UInt16.self))
      if (0xD800...0xDBFF).contains(unit) {
        let next =
          index + 1 < count
          ? UInt16(
            bigEndian: bytes.loadUnaligned(
              fromByteOffset: start + 2 * index + 2, as: UInt16.self)) : 0
        guard (0xDC00...0xDFFF).contains(next) else {
          throw PropertyListError(
            .invalidValue, "UTF-16 string has an unpaired high surrogate \(hex16(unit))",
            at: .offset(start + 2 * index))
        }
        index += 2
      } else if (0xDC00...0xDFFF).contains(unit) {
        throw PropertyListError(
          .invalidValue, "UTF-16 string has an unpaired low surrogate \(hex16(unit))",
          at: .offset(start + 2 * index))
      } else {
        index += 1
      }
    }
  }
}

/// Big-endian reads of the unsigned integers binary plists store.
enum BinaryBytes {
  /// Whether `bytes` start with `magic`, compared in place: `starts(with:)` walks both sequences
  /// a byte at a time.
  @inline(__always)
  static func hasPrefix(_ bytes: UnsafeRawBufferPointer, _ magic: StaticString) -> Bool {
    bytes.count >= magic.utf8CodeUnitCount
      && memcmp(bytes.baseAddress!, magic.utf8Start, magic.utf8CodeUnitCount) == 0
  }

  @inline(__always)
  static func readUInt64(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> UInt64 {
    UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self))
  }

  @inline(__always)
  static func readSizedUInt(_ bytes: UnsafeRawBufferPointer, _ at: Int, _ size: Int) -> UInt64 {
    switch size {
    case 1: return UInt64(bytes[at])
    case 2:
      return UInt64(UInt16(bigEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt16.self)))
    case 4:
      return UInt64(UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt32.self)))
    case 8: return readUInt64(bytes, at)
    default:
      var value: UInt64 = 0
      for index in at..<(at + size) { value = value << 8 | UInt64(bytes[index]) }
      return value
    }
  }

}

@inline(never)
func hex(_ byte: UInt8) -> String {
  let digits = String(byte, radix: 16, uppercase: true)
  return "0x" + (digits.count == 1 ? "0" + digits : digits)
}

@inline(never)
func hex16(_ unit: UInt16) -> String {
  "U+" + String(unit, radix: 16, uppercase: true)
}

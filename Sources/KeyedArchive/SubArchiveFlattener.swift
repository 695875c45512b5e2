import PortableFoundation
@_spi(InPlace) @_spi(Differential) @_spi(Writing) import PropertyList

// The sub-archive writer's flattener (see SubArchiveWriter.swift): `ArchiverFlattener`'s sharing
// of the laid-out objects, each object written as it gets its index (the bytes themselves by
// SubArchiveByteWriter.swift).

/// `ArchiverFlattener.table(for:)` of the envelope around the laid-out objects, written as the
/// binary writer writes it while it is flattened.
///
/// The flattener's order is the writer's: each object is written when it gets its index, a
/// container with room for its references, which are filled in as its contents get theirs.
struct Flattener: ~Copyable {
  // The bytes, in a block of `ReusableBlocks` (handed to `Data` when done), and where the next
  // object goes.
  var out: UnsafeMutableRawPointer?
  var capacity = 0
  var at = 0
  // Where each object starts, by index.
  var offsets = FlatBuffer<Int>(capacity: 160)
  // The width of references in this pass: 1 at first, wider when the objects turn out to need it
  // (the references that did not fit are then written again).
  var referenceSize = 1
  // The first index of each text as a key, and as a value, in this pass.
  private var keys = IDTable()
  private var values = IDTable()
  private var pass = 0
  private struct NumberEntry: BitwiseCopyable {
    let number: Scalar
    let index: Int
  }
  // Numbers by `ArchiverFlattener`'s rules: the first object's index.
  private var numbers = FlatBuffer<NumberEntry>(capacity: 16)
  // By UID (each below the number of laid-out objects): the first slot, or -1.
  private var uidSlots = FlatBuffer<Int>(capacity: 64)
  private var firstTrue = -1
  private var firstFalse = -1
  // What the one-pass scan of the bytes would find, counted as they are written (see
  // `WrittenPlistFacts`): the contents of each string, data and container, the references, the
  // largest UID plus one (0 for none), the longest string or data, and whether every dictionary
  // is plain. A dictionary is plain when it has at most 64 entries whose keys are ASCII and
  // distinct: every text written is ASCII, and an object's keys are those of the plain dictionary
  // it was read from (`ViewReader` reads only views whose dictionaries are plain, and lays out
  // `$class` once), or the builder's own distinct constants. (Only `archivedAsRootWithView` hands
  // these on: `encodedDictionary`'s root has its caller's keys, and is never read this way.)
  var contents = FlatBuffer<WrittenContents>(capacity: 160)
  var references = 0
  private var uidCeiling: UInt64 = 0
  private var longestValue = 0
  private var dictionariesArePlain = true

  deinit { if let out { ReusableBlocks.give(out) } }

  /// What the one-pass scan would find in the bytes `encoded` returned last; valid until the
  /// flattener is used again.
  var writtenFacts: WrittenPlistFacts {
    WrittenPlistFacts(
      contents: UnsafeBufferPointer(start: contents.base, count: contents.count),
      dictionariesArePlain: dictionariesArePlain,
      maximumUID: uidCeiling == 0 ? nil : uidCeiling - 1,
      // The envelope, `$objects`, an object, and an array in an object's field.
      depth: 4, visits: 1 &+ references, longestValue: longestValue)
  }

  /// The archive's bytes: the envelope NSKeyedArchiver writes, `$objects` the laid-out objects.
  mutating func encoded(_ layout: inout Layout, rootUID: UInt64, rootKey: Constant) -> Data {
    flatten(&layout, rootUID: rootUID, rootKey: rootKey, referenceSize: 1)
    let referenceSize = Self.byteCount(UInt64(offsets.count))
    if referenceSize != 1 {
      // More than 255 objects: flattened again with references as wide as their count needs
      // (the same objects, in the same order).
      flatten(&layout, rootUID: rootUID, rootKey: rootKey, referenceSize: referenceSize)
    }
    return finish()
  }

  private mutating func flatten(
    _ layout: inout Layout, rootUID: UInt64, rootKey: Constant, referenceSize: Int
  ) {
    pass += 1
    self.referenceSize = referenceSize
    offsets.removeAll()
    contents.removeAll()
    references = 0
    uidCeiling = 0
    longestValue = 0
    dictionariesArePlain = true
    numbers.removeAll()
    uidSlots.removeAll()
    uidSlots.append(repeating: -1, count: layout.objects.count)
    firstTrue = -1
    firstFalse = -1
    // Room for the usual archive: its strings and data, and a few bytes for each object and
    // reference.
    if let out { ReusableBlocks.give(out) }
    capacity = 256 + layout.textBytes + 48 * (layout.objects.count + layout.fields.count)
    out = ReusableBlocks.take(capacity)!
    // `bplist00`.
    Self.store(0x6270_6C69_7374_3030, 8, out!)
    at = 8

    let envelope = container(0xD0, 4)
    setReference(envelope, 0, constant(layout.id(.version), isKey: true, &layout))
    setReference(envelope, 1, constant(layout.id(.objectsArray), isKey: true, &layout))
    setReference(envelope, 2, constant(layout.id(.archiver), isKey: true, &layout))
    setReference(envelope, 3, constant(layout.id(.top), isKey: true, &layout))
    // 100000, as the only number so far.
    setReference(envelope, 4, number(.integer(bits: 100_000)))
    let array = container(0xA0, layout.objects.count)
    for position in 0..<layout.objects.count {
      setReference(array, position, object(layout.objects[position], &layout))
    }
    setReference(envelope, 5, array.index)
    setReference(envelope, 6, constant(layout.id(.keyedArchiver), isKey: false, &layout))
    let top = container(0xD0, 1)
    setReference(top, 0, constant(layout.id(rootKey), isKey: true, &layout))
    setReference(top, 1, uid(rootUID))
    setReference(envelope, 7, top.index)
  }

  /// An element of `$objects`.
  private mutating func object(_ object: BuiltObject, _ layout: inout Layout) -> Int {
    switch object.kind {
    case .null: return string(Constant.null.text)
    case .scalar: return scalar(object.scalar)
    case .instance:
      let dictionary = container(0xD0, object.count)
      if object.count > BinaryPropertyListView.plainDictionaryLimit {
        dictionariesArePlain = false
      }
      for position in 0..<object.count {
        setReference(
          dictionary, position,
          constant(layout.fields[object.start + position].key, isKey: true, &layout))
      }
      for position in 0..<object.count {
        setReference(
          dictionary, object.count + position,
          value(layout.fields[object.start + position], &layout)
        )
      }
      return dictionary.index
    case .classObject:
      let dictionary = container(0xD0, 2)
      setReference(dictionary, 0, constant(layout.id(.className), isKey: true, &layout))
      setReference(dictionary, 1, constant(layout.id(.classes), isKey: true, &layout))
      let name = layout.chains[object.start]
      let nameText = layout.interner.text(name)
      // A class object's name is an object of its own unless Apple shares it with `$classes`.
      setReference(
        dictionary, 2,
        Self.isSharedClassName(nameText)
          ? constant(name, isKey: false, &layout) : string(nameText))
      let chain = container(0xA0, object.count)
      for position in 0..<object.count {
        setReference(
          chain, position, constant(layout.chains[object.start + position], isKey: false, &layout))
      }
      setReference(dictionary, 3, chain.index)
      return dictionary.index
    }
  }

  /// A field's value.
  @inline(__always)
  private mutating func value(_ field: BuiltField, _ layout: inout Layout) -> Int {
    switch field.kind {
    case .uid: return uid(field.value)
    case .uids:
      let array = container(0xA0, field.count)
      let first = Int(field.value)
      for position in 0..<field.count {
        setReference(array, position, uid(layout.uidLists[first + position]))
      }
      return array.index
    case .emptyArray: return container(0xA0, 0).index
    case .inline:
      if field.scalar.kind == .string { return constant(field.scalar.id, isKey: false, &layout) }
      return scalar(field.scalar)
    }
  }

  /// A string, data, number or boolean: strings and data objects of their own, numbers shared by
  /// value, booleans a slot for each and references to the first of their value.
  @inline(__always)
  private mutating func scalar(_ scalar: Scalar) -> Int {
    switch scalar.kind {
    case .string: return bytes(0x50, scalar.text)
    case .data: return bytes(0x40, scalar.text)
    case .integer, .real: return number(scalar)
    case .boolean: return boolean(scalar.bits != 0)
    }
  }

  /// A string or data object of its own: its marker and its bytes.
  @inline(__always)
  private mutating func bytes(_ marker: UInt8, _ text: Text) -> Int {
    let count = text.count
    // Room for the longest marker, with its count.
    let index = begin(count &+ 10)
    let out = self.out.unsafelyUnwrapped
    if count < 15 {
      out.storeBytes(
        of: marker | UInt8(truncatingIfNeeded: count), toByteOffset: at, as: UInt8.self)
      at &+= 1
    } else {
      writeMarker(marker, count)
    }
    contents.append(WrittenContents(object: index, start: at, count: count))
    if count > longestValue { longestValue = count }
    Self.copy(text.start, to: out + at, count)
    at &+= count
    return index
  }

  /// `count` bytes: short runs (keys, names, header fields) by words in place, where calling
  /// `memcpy` cost more than the copy.
  @inline(__always)
  private static func copy(
    _ source: UnsafeRawPointer, to destination: UnsafeMutableRawPointer, _ count: Int
  ) {
    guard count <= 64 else {
      destination.copyMemory(from: source, byteCount: count)
      return
    }
    guard count >= 8 else {
      for position in 0..<count {
        destination.storeBytes(
          of: source.load(fromByteOffset: position, as: UInt8.self), toByteOffset: position,
          as: UInt8.self)
      }
      return
    }
    var position = 0
    while position &+ 8 <= count {
      destination.storeBytes(
        of: source.loadUnaligned(fromByteOffset: position, as: UInt64.self),
        toByteOffset: position, as: UInt64.self)
      position &+= 8
    }
    // The last bytes as the last eight, overlapping what is copied already.
    if position < count {
      destination.storeBytes(
        of: source.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self),
        toByteOffset: count &- 8, as: UInt64.self)
    }
  }

  /// A boolean: a slot for each, references to the first of its value.
  @inline(__always)
  private mutating func boolean(_ flag: Bool) -> Int {
    let index = begin(1)
    put(flag ? 0x09 : 0x08)
    if flag {
      if firstTrue < 0 { firstTrue = index }
      return firstTrue
    }
    if firstFalse < 0 { firstFalse = index }
    return firstFalse
  }

  /// A string object of its own.
  @inline(__always)
  private mutating func string(_ text: Text) -> Int {
    bytes(0x50, text)
  }

  static func isSharedClassName(_ name: Text) -> Bool {
    ArchiverFlattener.sharedClassNameTexts.contains { name == Text($0) }
  }

  @inline(__always)
  private mutating func constant(_ id: TextID, isKey: Bool, _ layout: inout Layout) -> Int {
    if let found = isKey ? keys.value(id, pass: pass) : values.value(id, pass: pass) {
      return found
    }
    let index = string(layout.interner.text(id))
    if isKey { keys.set(id, pass: pass, index) } else { values.set(id, pass: pass, index) }
    return index
  }

  @inline(__always)
  private mutating func uid(_ value: UInt64) -> Int {
    // Every occurrence takes a slot; references resolve to the first.
    let index = begin(9)
    if value <= 0xFF {
      self.out.unsafelyUnwrapped.storeBytes(
        of: (0x80 | UInt16(value) << 8).littleEndian, toByteOffset: at, as: UInt16.self)
      at &+= 2
    } else {
      let size = Self.byteCount(value)
      put(0x80 | UInt8(size - 1))
      putSized(value, size)
    }
    if value >= uidCeiling { uidCeiling = value &+ 1 }
    let first = uidSlots[Int(value)]
    if first >= 0 { return first }
    uidSlots[Int(value)] = index
    return index
  }

  private mutating func number(_ number: Scalar) -> Int {
    for position in 0..<numbers.count where numbers[position].number.isSameNumber(number) {
      return numbers[position].index
    }
    let index: Int
    if number.kind == .integer {
      if number.flag {
        index = begin(17)
        put(0x14)
        putSized(0, 8)
        putSized(number.bits, 8)
      } else {
        index = begin(1 + Self.byteCount(number.bits))
        writeInteger(number.bits)
      }
    } else if number.flag {
      index = begin(5)
      put(0x22)
      putSized(UInt64(Float(Double(bitPattern: number.bits)).bitPattern), 4)
    } else {
      index = begin(9)
      put(0x23)
      putSized(number.bits, 8)
    }
    numbers.append(NumberEntry(number: number, index: index))
    return index
  }
}

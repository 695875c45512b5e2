import PortableFoundation
@_spi(InPlace) @_spi(Differential) @_spi(Writing) import PropertyList

// The sub-archive writer's text table (see SubArchiveWriter.swift): each text gets an ID the
// first time it is met, and the sharing of the layout and the flattener looks IDs up in arrays.

/// First occurrences of texts: open addressing on the texts' hashes (no allocation per text, and
/// no `Hasher`).
struct TextTable: ~Copyable {
  // Not private: a file that destroys a table refers to its entries' type, which the compiler
  // (6.3) cannot do for a private type of another file.
  struct Entry: BitwiseCopyable {
    let text: Text
    let hash: UInt64
    let value: Int
  }
  private var slots = FlatBuffer<Int32>(capacity: 128)
  private var entries = FlatBuffer<Entry>(capacity: 64)

  init() {
    slots.append(repeating: -1, count: 128)
  }

  mutating func removeAll() {
    entries.removeAll()
    let count = slots.count
    slots.removeAll()
    slots.append(repeating: -1, count: count)
  }

  /// The value of the first text equal to `text`, or nil after recording `value` for it.
  mutating func firstOrInsert(_ text: Text, _ value: Int) -> Int? {
    let hash = text.hash
    let mask = slots.count - 1
    var slot = Int(truncatingIfNeeded: hash) & mask
    // Unchecked within the loop: the mask keeps every slot in range, and every filled slot names
    // an entry.
    let slotBase = slots.base
    while slotBase[slot] >= 0 {
      let entry = entries.base[Int(slotBase[slot])]
      if entry.hash == hash, entry.text == text { return entry.value }
      slot = (slot + 1) & mask
    }
    slotBase[slot] = Int32(entries.append(Entry(text: text, hash: hash, value: value)))
    // At most half full, so that probes stay short.
    if entries.count * 2 > slots.count { grow() }
    return nil
  }

  private mutating func grow() {
    let count = slots.count * 2
    slots.removeAll()
    slots.append(repeating: -1, count: count)
    let mask = count - 1
    for position in 0..<entries.count {
      var slot = Int(truncatingIfNeeded: entries[position].hash) & mask
      while slots[slot] >= 0 { slot = (slot + 1) & mask }
      slots[slot] = Int32(position)
    }
  }
}

/// The texts of one archive read (or one dictionary of the caller's), each with an ID.
struct Interner: ~Copyable {
  private var texts = FlatBuffer<Text>(capacity: 64)
  private var table = TextTable()
  // The IDs of the constants, or -1 until first asked for.
  private var constants = FlatBuffer<TextID>(capacity: Constant.count)
  // The ID of each string object of the plist read, or -1: by object index, for plists of up to
  // `cachedObjects` objects.
  private var objects = FlatBuffer<TextID>(capacity: 256)
  private static let cachedObjects = 1 << 16

  /// The number of IDs given.
  var count: Int { texts.count }

  /// No text yet, for a plist of `objectCount` objects.
  mutating func reset(objectCount: Int) {
    texts.removeAll()
    table.removeAll()
    constants.removeAll()
    constants.append(repeating: -1, count: Constant.count)
    objects.removeAll()
    if objectCount <= Self.cachedObjects { objects.append(repeating: -1, count: objectCount) }
  }

  /// The ID of a text.
  mutating func id(_ text: Text) -> TextID {
    let next = texts.count
    if let found = table.firstOrInsert(text, next) { return TextID(found) }
    texts.append(text)
    return TextID(next)
  }

  @inline(__always)
  mutating func id(_ constant: Constant) -> TextID {
    let cached = constants[constant.rawValue]
    if cached >= 0 { return cached }
    let id = id(constant.text)
    constants[constant.rawValue] = id
    return id
  }

  /// The ID of a string object of the plist read, when it has one.
  @inline(__always)
  func cachedID(object: Int) -> TextID? {
    guard UInt(bitPattern: object) < UInt(bitPattern: objects.count) else { return nil }
    let id = objects.base[object]
    return id >= 0 ? id : nil
  }

  /// The ID of the ASCII text of a string object of the plist read.
  mutating func id(object: Int, _ text: Text) -> TextID {
    let id = id(text)
    if UInt(bitPattern: object) < UInt(bitPattern: objects.count) { objects.base[object] = id }
    return id
  }

  @inline(__always)
  func text(_ id: TextID) -> Text { texts[Int(id)] }
}

/// A value for each text ID, valid in one pass only: nothing to clear between passes.
struct IDTable: ~Copyable {
  // Not private: a file that destroys a table refers to its entries' type, which the compiler
  // (6.3) cannot do for a private type of another file.
  struct Entry: BitwiseCopyable {
    var value: Int
    var pass: Int
  }
  private var entries = FlatBuffer<Entry>(capacity: 64)

  @inline(__always)
  func value(_ id: TextID, pass: Int) -> Int? {
    guard Int(id) < entries.count else { return nil }
    let entry = entries.base[Int(id)]
    return entry.pass == pass ? entry.value : nil
  }

  @inline(__always)
  mutating func set(_ id: TextID, pass: Int, _ value: Int) {
    if Int(id) >= entries.count {
      entries.append(repeating: Entry(value: 0, pass: -1), count: Int(id) + 1 - entries.count)
    }
    entries[Int(id)] = Entry(value: value, pass: pass)
  }
}

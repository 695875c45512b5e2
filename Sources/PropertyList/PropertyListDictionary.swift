import PortableFoundation

/// A property-list dictionary that keeps its keys in insertion order.
///
/// Binary plists written by CoreFoundation store keys in hash order, and re-encoding an untouched plist
/// to the same bytes needs that order back, so the order is part of the value. Equality, however, ignores
/// order: two dictionaries are equal when they hold the same keys with equal values.
///
/// Keys are told apart by their exact characters, as CoreFoundation tells `CFString` keys apart, not by
/// Unicode canonical equivalence as `String`'s `==` does: "é" (U+00E9) and "e" followed by U+0301 are
/// two keys, in every dictionary and for every operation.
public struct PropertyListDictionary: Sendable, Hashable, RandomAccessCollection,
  ExpressibleByDictionaryLiteral
{
  /// One key and its value.
  public typealias Element = (key: String, value: PropertyListValue)

  /// The entries in order.
  public private(set) var entries: [Element]
  // Built lazily only for dictionaries large enough that a linear scan would hurt.
  private var index: [ExactString: Int]?

  // Up to this many entries, lookups scan (comparing lengths first) and duplicate keys are found by
  // fingerprint: cheaper than hashing every key into a table for the many small dictionaries of
  // archives and resume data. Above it, a hash index pays for itself.
  static let indexThreshold = 64

  /// Creates an empty dictionary.
  public init() {
    entries = []
  }

  /// Creates a dictionary from entries; a later duplicate key replaces the earlier value in place.
  public init(_ pairs: some Sequence<(String, PropertyListValue)>) {
    entries = []
    for (key, value) in pairs { self[key] = value }
  }

  /// Creates a dictionary from entries the caller has checked hold no key twice.
  package init(uniqueKeys entries: [Element]) {
    self.entries = entries
    if entries.count > Self.indexThreshold { finishBuilding() }
  }

  /// Creates a dictionary from a literal.
  public init(dictionaryLiteral elements: (String, PropertyListValue)...) {
    self.init(elements)
  }

  /// The position of the first entry.
  public var startIndex: Int { entries.startIndex }
  /// The position past the last entry.
  public var endIndex: Int { entries.endIndex }
  /// The entry at a position.
  public subscript(position: Int) -> Element { entries[position] }

  /// The keys in order.
  public var keys: [String] { entries.map(\.key) }

  /// The position of a key (with exactly these characters), if present.
  public func position(of key: String) -> Int? {
    if let index { return index[ExactString(key)] }
    // The key's bytes found once for the whole scan. Through the buffer, each entry's key is read
    // in place: indexing the array would copy whole entries, values included, only to compare
    // their keys.
    let found: Int?? = key.utf8.withContiguousStorageIfAvailable { keyBytes in
      entries.withUnsafeBufferPointer { entries in
        for position in entries.indices where Self.keyMatches(entries, position, keyBytes) {
          return position
        }
        return nil
      }
    }
    if let found { return found }
    return entries.firstIndex { Self.sameBytes($0.key, key) }
  }

  /// Whether `body` returns true for every key and value, in order; stops at the first false. Keys
  /// and values are lent in place, so a scan that only looks at them copies (and retains) nothing.
  public func entriesSatisfy(
    _ body: (borrowing String, borrowing PropertyListValue) throws -> Bool
  ) rethrows -> Bool {
    try entries.withUnsafeBufferPointer { entries in
      for position in entries.indices {
        let entry = UnsafeRawPointer(entries.baseAddress! + position)
        guard
          try body(
            entry.assumingMemoryBound(to: String.self).pointee,
            (entry + Self.valueOffset).assumingMemoryBound(to: PropertyListValue.self).pointee)
        else { return false }
      }
      return true
    }
  }

  // Where an entry's value starts: a tuple lays its elements out in order, each at the next offset
  // its alignment allows.
  private static var valueOffset: Int {
    let alignment = MemoryLayout<PropertyListValue>.alignment
    return (MemoryLayout<String>.size + alignment - 1) / alignment * alignment
  }

  // Compares the key of an entry in place with a key's bytes. Projecting `.key` out of an element
  // copies the whole entry (retaining its key and its value) only to compare; the key is the
  // tuple's first element, at its start, so it is read through a pointer to it instead.
  @inline(__always)
  private static func keyMatches(
    _ entries: UnsafeBufferPointer<Element>, _ position: Int, _ key: UnsafeBufferPointer<UInt8>
  ) -> Bool {
    let candidate = UnsafeRawPointer(entries.baseAddress! + position).assumingMemoryBound(
      to: String.self)
    guard candidate.pointee.utf8.count == key.count else { return false }
    return candidate.pointee.utf8.withContiguousStorageIfAvailable { bytes in
      key.isEmpty || memcmp(bytes.baseAddress!, key.baseAddress!, key.count) == 0
    } ?? candidate.pointee.utf8.elementsEqual(key)
  }

  /// Reads, replaces (in place), appends or (with nil) removes the value for a key.
  public subscript(key: String) -> PropertyListValue? {
    get {
      position(of: key).map { entries[$0].value }
    }
    set {
      if let existing = position(of: key) {
        if let newValue {
          entries[existing].value = newValue
        } else {
          entries.remove(at: existing)
          index = nil
          rebuildIndexIfLarge()
        }
      } else if let newValue {
        entries.append((key, newValue))
        if index != nil {
          index?[ExactString(key)] = entries.count - 1
        } else {
          rebuildIndexIfLarge()
        }
      }
    }
  }

  /// Makes room for `count` entries.
  package mutating func reserveCapacity(_ count: Int) {
    entries.reserveCapacity(count)
  }

  /// Appends an entry without looking for an existing key; for readers that call `finishBuilding`.
  package mutating func appendUnchecked(_ key: String, _ value: PropertyListValue) {
    entries.append((key, value))
    if index != nil { index?[ExactString(key)] = entries.count - 1 }
  }

  /// Replaces the value at a position; for readers that fold duplicate keys themselves.
  mutating func replaceValue(at position: Int, with value: PropertyListValue) {
    entries[position].value = value
  }

  /// Ends a run of `appendUnchecked`: folds duplicate keys (the last value wins, at the first key's
  /// position, as CoreFoundation's readers do) and builds the lookup index when the dictionary is large.
  package mutating func finishBuilding() {
    if entries.count <= Self.indexThreshold {
      guard entries.count > 1 else { return }
      // Duplicates are rare: compare cheap fingerprints pairwise, and whole keys only when two
      // match. The fingerprints live on the stack: most dictionaries are a few entries.
      withUnsafeTemporaryAllocation(of: UInt64.self, capacity: entries.count) { prints in
        var count = entries.count
        // Keys read in place (see `keyMatches`): indexing the array copies whole entries.
        entries.withUnsafeBufferPointer { entries in
          for position in 0..<count {
            prints[position] = Self.fingerprint(
              UnsafeRawPointer(entries.baseAddress! + position).assumingMemoryBound(
                to: String.self
              ).pointee)
          }
        }
        var position = 1
        while position < count {
          let print = prints[position]
          var earlier = 0
          while earlier < position,
            prints[earlier] != print
              || !Self.sameBytes(entries[earlier].key, entries[position].key)
          {
            earlier += 1
          }
          if earlier < position {
            entries[earlier].value = entries[position].value
            entries.remove(at: position)
            count -= 1
            for later in position..<count { prints[later] = prints[later + 1] }
          } else {
            position += 1
          }
        }
      }
      return
    }
    var built = [ExactString: Int](minimumCapacity: entries.count)
    var folded: [Element]?
    for (offset, entry) in entries.enumerated() {
      let key = ExactString(entry.key)
      if let first = built[key] {
        if folded == nil { folded = Array(entries[..<offset]) }
        folded?[first].value = entry.value
      } else {
        built[key] = folded?.count ?? offset
        folded?.append(entry)
      }
    }
    if let folded { entries = folded }
    index = built
  }

  /// A quick fingerprint of the UTF-8 bytes in O(1) (their count, first 8 and last 8 bytes), not a
  /// hash for tables. Equal bytes have equal fingerprints; keys whose fingerprints match are then
  /// compared byte for byte (`sameBytes`). Never 0, so that readers can use 0 for "not computed yet".
  static func fingerprint(_ key: String) -> UInt64 {
    key.withUTF8InPlace { keyFingerprint(UnsafeRawBufferPointer($0)) }
  }

  /// Whether two keys have the same UTF-8 bytes (so the same characters): how keys are told apart,
  /// not by canonical equivalence.
  package static func sameBytes(_ lhs: String, _ rhs: String) -> Bool {
    let count = lhs.utf8.count
    guard count == rhs.utf8.count else { return false }
    // Borrowed in place: copying the strings to call `withUTF8` retains and releases each, which
    // cost more than the comparison.
    let compared: Bool? =
      lhs.utf8.withContiguousStorageIfAvailable { left in
        rhs.utf8.withContiguousStorageIfAvailable { right in
          count == 0 || memcmp(left.baseAddress!, right.baseAddress!, count) == 0
        }
      } ?? nil
    return compared ?? lhs.utf8.elementsEqual(rhs.utf8)
  }

  private mutating func rebuildIndexIfLarge() {
    guard entries.count > Self.indexThreshold, index == nil else { return }
    var built = [ExactString: Int](minimumCapacity: entries.count)
    for (offset, entry) in entries.enumerated() { built[ExactString(entry.key)] = offset }
    index = built
  }

  /// The entries sorted by key the way CoreFoundation's XML writer sorts them (by UTF-16 code unit).
  public var sortedEntries: [Element] {
    // Entries read from XML are in this order already: checked in one pass, without a sort.
    var index = entries.startIndex
    while index + 1 < entries.endIndex,
      Self.precedesInUTF16(entries[index].key, entries[index + 1].key)
    {
      index += 1
    }
    if index + 1 >= entries.endIndex { return entries }
    return entries.sorted { Self.precedesInUTF16($0.key, $1.key) }
  }

  /// Whether `lhs` sorts before `rhs` by UTF-16 code unit. Compared as UTF-8 bytes where that
  /// gives the same answer: UTF-8's byte order is code-point order, which is UTF-16's except
  /// between a character above U+FFFF (lead byte 0xF0–0xF4) and one in U+E000–U+FFFF (lead byte
  /// 0xEE or 0xEF), so a first difference between two bytes below 0xEE decides it.
  static func precedesInUTF16(_ lhs: String, _ rhs: String) -> Bool {
    // Read in place (`withUTF8InPlace`): copies for `withUTF8` retain and release each key.
    let byBytes: Bool? = lhs.withUTF8InPlace { left in
      rhs.withUTF8InPlace { right -> Bool? in
        let common = Swift.min(left.count, right.count)
        var index = 0
        // Keys of one dictionary often share a long prefix (`NSURLSessionResume…`): eight bytes
        // a step while they agree.
        if let leftBase = UnsafeRawPointer(left.baseAddress),
          let rightBase = UnsafeRawPointer(right.baseAddress)
        {
          while common &- index >= 8,
            leftBase.loadUnaligned(fromByteOffset: index, as: UInt64.self)
              == rightBase.loadUnaligned(fromByteOffset: index, as: UInt64.self)
          {
            index &+= 8
          }
        }
        while index < common, left[index] == right[index] { index &+= 1 }
        guard index < common else { return left.count < right.count }
        guard left[index] < 0xEE, right[index] < 0xEE else { return nil }
        return left[index] < right[index]
      }
    }
    return byBytes ?? lhs.utf16.lexicographicallyPrecedes(rhs.utf16)
  }

  /// Order-insensitive equality.
  public static func == (lhs: PropertyListDictionary, rhs: PropertyListDictionary) -> Bool {
    guard lhs.count == rhs.count else { return false }
    for (key, value) in lhs.entries {
      guard let other = rhs[key], other == value else { return false }
    }
    return true
  }

  /// Order-insensitive hash.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(entries.count)
    var combined = 0
    for (key, value) in entries {
      var entryHasher = Hasher()
      entryHasher.combine(key)
      entryHasher.combine(value)
      combined ^= entryHasher.finalize()
    }
    hasher.combine(combined)
  }
}

/// A string compared and hashed by its UTF-8 bytes, which is CFEqual's code-unit comparison (for
/// valid strings the same test): unlike `String`'s `==`, canonically equivalent strings are two.
/// What dictionary keys and the writers' uniquing go by.
package struct ExactString: Hashable {
  /// The string.
  package let string: String

  /// Wraps a string.
  package init(_ string: String) { self.string = string }

  /// Whether the two have the same bytes.
  package static func == (lhs: ExactString, rhs: ExactString) -> Bool {
    PropertyListDictionary.sameBytes(lhs.string, rhs.string)
  }

  /// Hashes the bytes.
  package func hash(into hasher: inout Hasher) {
    let hashed: Void? = string.utf8.withContiguousStorageIfAvailable {
      hasher.combine(bytes: UnsafeRawBufferPointer($0))
    }
    if hashed == nil {
      // As the contiguous case feeds them, so that equal strings hash equal however stored.
      Array(string.utf8).withUnsafeBytes { hasher.combine(bytes: $0) }
    }
  }
}

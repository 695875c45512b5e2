import PortableFoundation

/// What `BinaryParser` makes of the objects it has read and checked. The parser does every check
/// and decides what is shared and cached; a builder only turns checked bytes into its values, and
/// never fails.
protocol BinaryPlistBuilder: ~Copyable {
  associatedtype Value
  associatedtype ArrayState
  associatedtype DictionaryState

  init(bytes: UnsafeRawBufferPointer, objectCount: Int)

  mutating func boolean(_ flag: Bool) -> Value
  mutating func integer(_ integer: PropertyListInteger) -> Value
  mutating func real(_ real: PropertyListReal) -> Value
  /// Seconds since 2001-01-01.
  mutating func date(_ seconds: Double) -> Value
  mutating func data(_ bytes: UnsafeRawBufferPointer) -> Value
  /// Bytes already checked to be ASCII.
  mutating func asciiString(_ bytes: UnsafeRawBufferPointer) -> Value
  /// Big-endian UTF-16 units already checked to pair their surrogates.
  mutating func utf16String(_ bytes: UnsafeRawBufferPointer) -> Value
  mutating func uid(_ uid: UInt64) -> Value

  /// `start`: where the array's references start.
  mutating func beginArray(count: Int, start: Int) -> ArrayState
  mutating func append(_ element: Value, to array: inout ArrayState)
  mutating func endArray(_ array: consuming ArrayState) -> Value

  /// `start`: where the dictionary's key references start.
  mutating func beginDictionary(count: Int, start: Int) -> DictionaryState
  /// `key` is a string (of object `keyObject`, ASCII or UTF-16): the parser has checked it.
  mutating func addEntry(
    key: Value, keyObject: Int, keyIsASCII: Bool, value: Value, to dictionary: inout DictionaryState
  )
  mutating func endDictionary(_ dictionary: consuming DictionaryState) -> Value
}

/// A fingerprint of a key's bytes in O(1): its length, first 8 and last 8 bytes. Equal bytes give
/// equal fingerprints; keys with equal fingerprints are then compared byte for byte. Never 0, so
/// that readers can use 0 for "not computed yet".
@inline(__always)
func keyFingerprint(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
  let count = bytes.count
  var first: UInt64 = 0
  var last: UInt64 = 0
  if count >= 8 {
    first = bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self)
    last = bytes.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
  } else {
    for byte in bytes { first = first << 8 | UInt64(byte) }
  }
  let mixed = (UInt64(truncatingIfNeeded: count) &* 0x9E37_79B9_7F4A_7C15) ^ first
  return (mixed &* 0xBF58_476D_1CE4_E5B9) ^ (last &* 0x94D0_49BB_1331_11EB) | 1
}

/// Builds ``PropertyListValue``s: what ``BinaryPropertyListReader`` returns.
struct ValueBuilder: BinaryPlistBuilder, ~Copyable {
  struct DictionaryState {
    var dictionary: PropertyListDictionary
    // Where this dictionary's key fingerprints start on the stack.
    let printBase: Int
    let foldsWhileReading: Bool
  }

  // Each string object's key fingerprint (0 until it is first used as a key): archives share key
  // objects between dictionaries, so each key is fingerprinted once per file.
  let keyPrints: UnsafeMutablePointer<UInt64>
  let objectCount: Int
  // A stack of the fingerprints of the distinct keys of the dictionaries being read, so duplicate
  // keys are found without a heap array per dictionary; it grows when nesting needs more.
  var printStack: UnsafeMutablePointer<UInt64>
  var printStackCapacity = 64
  var printStackTop = 0

  init(bytes: UnsafeRawBufferPointer, objectCount: Int) {
    self.objectCount = objectCount
    keyPrints = .allocate(capacity: objectCount)
    keyPrints.initialize(repeating: 0, count: objectCount)
    printStack = .allocate(capacity: printStackCapacity)
  }

  deinit {
    keyPrints.deallocate()
    printStack.deallocate()
  }

  func boolean(_ flag: Bool) -> PropertyListValue { .boolean(flag) }
  func integer(_ integer: PropertyListInteger) -> PropertyListValue { .integer(integer) }
  func real(_ real: PropertyListReal) -> PropertyListValue { .real(real) }
  func date(_ seconds: Double) -> PropertyListValue {
    .date(Date(timeIntervalSinceReferenceDate: seconds))
  }
  func data(_ bytes: UnsafeRawBufferPointer) -> PropertyListValue {
    .data(Data(bytes: bytes.baseAddress!, count: bytes.count))
  }
  func asciiString(_ bytes: UnsafeRawBufferPointer) -> PropertyListValue {
    .string(String(decoding: bytes, as: UTF8.self))
  }
  func utf16String(_ bytes: UnsafeRawBufferPointer) -> PropertyListValue {
    .string(Self.decodeUTF16(bytes))
  }
  func uid(_ uid: UInt64) -> PropertyListValue { .uid(uid) }

  /// Big-endian UTF-16 units as a string.
  static func decodeUTF16(_ bytes: UnsafeRawBufferPointer) -> String {
    let count = bytes.count / 2
    var units = [UInt16]()
    units.reserveCapacity(count)
    for index in 0..<count {
      units.append(
        UInt16(bigEndian: bytes.loadUnaligned(fromByteOffset: 2 * index, as: UInt16.self)))
    }
    return String(decoding: units, as: UTF16.self)
  }

  func beginArray(count: Int, start: Int) -> [PropertyListValue] {
    var elements = [PropertyListValue]()
    elements.reserveCapacity(count)
    return elements
  }

  func append(_ element: PropertyListValue, to array: inout [PropertyListValue]) {
    array.append(element)
  }

  func endArray(_ array: consuming [PropertyListValue]) -> PropertyListValue {
    .array(array)
  }

  func beginDictionary(count: Int, start: Int) -> DictionaryState {
    var dictionary = PropertyListDictionary()
    dictionary.reserveCapacity(count)
    // Small dictionaries fold duplicate keys as they are read, as `finishBuilding` would afterwards:
    // the last value wins, at the first key's position.
    return DictionaryState(
      dictionary: dictionary, printBase: printStackTop,
      foldsWhileReading: count <= PropertyListDictionary.indexThreshold)
  }

  mutating func addEntry(
    key: PropertyListValue, keyObject: Int, keyIsASCII: Bool, value: PropertyListValue,
    to state: inout DictionaryState
  ) {
    guard case .string(let key) = key else { return }
    guard state.foldsWhileReading else {
      state.dictionary.appendUnchecked(key, value)
      return
    }
    var print = keyPrints[keyObject]
    if print == 0 {
      print = PropertyListDictionary.fingerprint(key)
      keyPrints[keyObject] = print
    }
    // Nested reads have returned, so the stack above `printBase` holds this dictionary's keys.
    let distinct = printStackTop - state.printBase
    var earlier = 0
    while earlier < distinct,
      printStack[state.printBase + earlier] != print
        || !PropertyListDictionary.sameBytes(state.dictionary.entries[earlier].key, key)
    {
      earlier += 1
    }
    if earlier < distinct {
      state.dictionary.replaceValue(at: earlier, with: value)
    } else {
      pushPrint(print)
      state.dictionary.appendUnchecked(key, value)
    }
  }

  mutating func endDictionary(_ state: consuming DictionaryState) -> PropertyListValue {
    printStackTop = state.printBase
    var dictionary = state.dictionary
    if !state.foldsWhileReading { dictionary.finishBuilding() }
    return .dictionary(dictionary)
  }

  mutating func pushPrint(_ print: UInt64) {
    if printStackTop == printStackCapacity {
      // At most 64 keys per nesting level, and nesting is bounded by the depth limit.
      let grown = UnsafeMutablePointer<UInt64>.allocate(capacity: printStackCapacity * 2)
      grown.moveInitialize(from: printStack, count: printStackTop)
      printStack.deallocate()
      printStack = grown
      printStackCapacity *= 2
    }
    printStack[printStackTop] = print
    printStackTop += 1
  }
}

/// Where an object's contents are: a string's bytes (`count` in bytes for ASCII, in units for
/// UTF-16), a data object's bytes, an array's references, a dictionary's key references (the value
/// references follow). What `BinaryPropertyListView` reads objects with; nothing for other objects.
@usableFromInline
struct ByteSpan: Sendable {
  @usableFromInline var start: Int
  @usableFromInline var count: Int

  static let none = ByteSpan(start: 0, count: 0)
}

/// Builds no values, only what `BinaryPropertyListView` needs: where each string, data, array and
/// dictionary's contents are (cached by the parser per object), and whether every dictionary is
/// plain (at most `indexThreshold` entries, ASCII keys, no key twice), so that a key found in the
/// bytes is the one the value reader's folded dictionary holds.
struct SpanBuilder: BinaryPlistBuilder, ~Copyable {
  /// The state of a dictionary being read.
  struct DictionaryState {
    var span: ByteSpan
    // Where this dictionary's keys start on the stack.
    let keyBase: Int
    // One bit per key fingerprint's low 7 bits: a key whose bit is clear is new to this
    // dictionary, so most keys are never compared with the others.
    var seen: (UInt64, UInt64) = (0, 0)
  }

  let base: UnsafeRawPointer?
  // The keys of the dictionaries being read, innermost last, with their fingerprints.
  var keyStack: [(span: ByteSpan, print: UInt64)] = []
  var dictionariesArePlain = true
  /// The largest UID read, if any.
  var maximumUID: UInt64?

  init(bytes: UnsafeRawBufferPointer, objectCount: Int) {
    base = bytes.baseAddress
  }

  @inline(__always)
  private func span(_ bytes: UnsafeRawBufferPointer, count: Int) -> ByteSpan {
    guard let base, let start = bytes.baseAddress else { return .none }
    return ByteSpan(start: start - base, count: count)
  }

  func boolean(_ flag: Bool) -> ByteSpan { .none }
  func integer(_ integer: PropertyListInteger) -> ByteSpan { .none }
  func real(_ real: PropertyListReal) -> ByteSpan { .none }
  func date(_ seconds: Double) -> ByteSpan { .none }
  func data(_ bytes: UnsafeRawBufferPointer) -> ByteSpan { span(bytes, count: bytes.count) }
  func asciiString(_ bytes: UnsafeRawBufferPointer) -> ByteSpan {
    span(bytes, count: bytes.count)
  }
  func utf16String(_ bytes: UnsafeRawBufferPointer) -> ByteSpan {
    span(bytes, count: bytes.count / 2)
  }
  mutating func uid(_ uid: UInt64) -> ByteSpan {
    maximumUID = max(maximumUID ?? 0, uid)
    return .none
  }

  func beginArray(count: Int, start: Int) -> ByteSpan { ByteSpan(start: start, count: count) }
  func append(_ element: ByteSpan, to array: inout ByteSpan) {}
  func endArray(_ array: consuming ByteSpan) -> ByteSpan { array }

  mutating func beginDictionary(count: Int, start: Int) -> DictionaryState {
    if count > PropertyListDictionary.indexThreshold { dictionariesArePlain = false }
    return DictionaryState(span: ByteSpan(start: start, count: count), keyBase: keyStack.count)
  }

  mutating func addEntry(
    key: ByteSpan, keyObject: Int, keyIsASCII: Bool, value: ByteSpan,
    to state: inout DictionaryState
  ) {
    guard dictionariesArePlain else { return }
    // UTF-16 keys would need comparing as strings, not bytes: a dictionary with one is not plain.
    guard keyIsASCII, let base else {
      dictionariesArePlain = false
      return
    }
    let print = keyFingerprint(UnsafeRawBufferPointer(start: base + key.start, count: key.count))
    let bit = UInt64(1) << (print & 63)
    let seen = print & 64 == 0 ? state.seen.0 : state.seen.1
    if seen & bit != 0 {
      // Nested dictionaries have ended, so the stack above `keyBase` holds this dictionary's keys.
      for earlier in keyStack[state.keyBase...] where earlier.print == print {
        if earlier.span.count == key.count
          && memcmp(base + earlier.span.start, base + key.start, key.count) == 0
        {
          dictionariesArePlain = false
          return
        }
      }
    }
    if print & 64 == 0 { state.seen.0 |= bit } else { state.seen.1 |= bit }
    keyStack.append((key, print))
  }

  mutating func endDictionary(_ state: consuming DictionaryState) -> ByteSpan {
    if dictionariesArePlain { keyStack.removeSubrange(state.keyBase...) }
    return state.span
  }
}

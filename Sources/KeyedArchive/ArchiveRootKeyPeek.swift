import PortableFoundation

// A fast path. Its tree twin: `KeyedArchive(decoding:).rootKeys`, which reads and checks the
// whole archive. Diagnosis asks which key a response archive's root is under for every blob that
// holds one, and a batch record must not pay for decoding the archive to answer. Held equal by
// "The root-key peek agrees with decoding on every fixture archive" in
// Tests/ResumeDataTests/AppleDecoderFormTests.swift
// and by the fuzz harness Fuzz/Sources/FuzzKeyedArchive/KeyedArchiveHarness.swift.

extension ArchiveRootKeys {
  /// Which of Apple's two root keys the `$top` dictionary of a binary archive holds, read from
  /// the few objects that say it (the trailer, the top-level dictionary, `$top` and its keys)
  /// without reading the rest; nil when the bytes are not a binary property list whose top level
  /// is a dictionary with a `$top` dictionary, as far as those objects show. Where both answer,
  /// it is what decoding the archive gives (`KeyedArchive.rootKeys`).
  public init?(peekingBinaryArchive data: Data) {
    guard
      let keys = data.withUnsafeBytes({ bytes -> ArchiveRootKeys? in
        var reader = PeekReader(bytes: bytes)
        return reader.rootKeys()
      })
    else { return nil }
    self = keys
  }
}

/// Reads single objects of a binary property list by their index, checking each offset and size
/// against the buffer.
private struct PeekReader {
  let bytes: UnsafeRawBufferPointer
  var offsetSize = 0
  var referenceSize = 0
  var objectCount = 0
  var offsetTable = 0

  init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

  /// A big-endian unsigned integer of `size` (1 to 8) bytes at `position`, nil past the end.
  func integer(at position: Int, size: Int) -> Int? {
    guard size >= 1, size <= 8, position >= 0, position <= bytes.count - size else { return nil }
    var value: UInt64 = 0
    for index in 0..<size { value = value << 8 | UInt64(bytes[position + index]) }
    return value <= UInt64(Int.max) ? Int(value) : nil
  }

  /// Where object `index` starts.
  func offset(of index: Int) -> Int? {
    guard index >= 0, index < objectCount else { return nil }
    let (position, overflow) = index.multipliedReportingOverflow(by: offsetSize)
    guard !overflow, let offset = integer(at: offsetTable &+ position, size: offsetSize),
      offset >= 8, offset < offsetTable
    else { return nil }
    return offset
  }

  /// The element count of the container or string whose marker is at `position`, and where its
  /// contents start.
  func count(at position: Int) -> (count: Int, start: Int)? {
    guard position < bytes.count else { return nil }
    let low = Int(bytes[position] & 0x0F)
    guard low == 0x0F else { return (low, position + 1) }
    // A count of 15 or more follows as an integer object: marker 0x1n, 2^n bytes.
    guard position + 1 < bytes.count, bytes[position + 1] & 0xF0 == 0x10 else { return nil }
    let size = 1 << Int(bytes[position + 1] & 0x0F)
    guard size <= 8, let count = integer(at: position + 2, size: size) else { return nil }
    return (count, position + 2 + size)
  }

  /// Where the references of dictionary `index` start, and its count (at most 16: an envelope
  /// holds four keys, `$top` one or two).
  func dictionary(_ index: Int) -> (start: Int, count: Int)? {
    guard let offset = offset(of: index), bytes[offset] & 0xF0 == 0xD0,
      let (count, start) = count(at: offset), count <= 16,
      start <= bytes.count - 2 * count * referenceSize
    else { return nil }
    return (start, count)
  }

  /// Reference `position` of a dictionary whose references start at `start`: keys first, then
  /// values.
  func reference(_ start: Int, _ position: Int) -> Int? {
    integer(at: start + position * referenceSize, size: referenceSize)
  }

  /// Whether object `index` is the ASCII string `text`.
  func isASCIIString(_ index: Int, _ text: StaticString) -> Bool {
    guard let offset = offset(of: index), bytes[offset] & 0xF0 == 0x50,
      let (count, start) = count(at: offset), count == text.utf8CodeUnitCount,
      start <= bytes.count - count
    else { return false }
    return memcmp(bytes.baseAddress! + start, text.utf8Start, count) == 0
  }

  /// Whether object `index` is a string of ASCII bytes (marker 0x5n), not another object.
  func isASCII(_ index: Int) -> Bool {
    guard let offset = offset(of: index) else { return false }
    return bytes[offset] & 0xF0 == 0x50
  }

  mutating func rootKeys() -> ArchiveRootKeys? {
    guard bytes.count >= 40, memcmp(bytes.baseAddress!, "bplist", 6) == 0 else { return nil }
    let trailer = bytes.count - 32
    offsetSize = Int(bytes[trailer + 6])
    referenceSize = Int(bytes[trailer + 7])
    guard (1...8).contains(offsetSize), (1...8).contains(referenceSize),
      let count = integer(at: trailer + 8, size: 8), let top = integer(at: trailer + 16, size: 8),
      let table = integer(at: trailer + 24, size: 8), table >= 8, table < trailer,
      count > 0, count <= (trailer - table) / offsetSize, top < count
    else { return nil }
    objectCount = count
    offsetTable = table
    // Keys in another encoding than ASCII, or `$top` twice, are left to decoding. Read without
    // building anything: diagnosis asks this of every blob that holds a response.
    guard let envelope = dictionary(top) else { return nil }
    var topDictionary: Int?
    for position in 0..<envelope.count {
      guard let key = reference(envelope.start, position), isASCII(key) else { return nil }
      guard isASCIIString(key, "$top") else { continue }
      guard topDictionary == nil, let value = reference(envelope.start, envelope.count + position)
      else { return nil }
      topDictionary = value
    }
    guard let topDictionary, let rootKeys = dictionary(topDictionary) else { return nil }
    var keys: ArchiveRootKeys = []
    for position in 0..<rootKeys.count {
      guard let key = reference(rootKeys.start, position), isASCII(key) else { return nil }
      if isASCIIString(key, "root") { keys.insert(.root) }
      if isASCIIString(key, "NSKeyedArchiveRootObjectKey") { keys.insert(.rootObjectKey) }
    }
    return keys
  }
}

import PortableFoundation
@_spi(InPlace) @_spi(Differential) @_spi(Writing) import PropertyList

// The sub-archive writer's memory (see SubArchiveWriter.swift): flat buffers of plain values, the
// block a caller's strings and data are copied into, and the pool that keeps one writer's buffers
// from one archive to the next.

/// A growable array of plain values in memory of its own: appending and reading check bounds, but
/// never uniqueness, and no value is retained or released.
struct FlatBuffer<Element: BitwiseCopyable>: ~Copyable {
  private(set) var base: UnsafeMutablePointer<Element>
  private(set) var count = 0
  private(set) var capacity: Int

  init(capacity: Int) {
    self.capacity = max(capacity, 4)
    base = .allocate(capacity: self.capacity)
  }

  deinit { base.deallocate() }

  @inline(__always)
  subscript(position: Int) -> Element {
    get {
      precondition(UInt(bitPattern: position) < UInt(bitPattern: count), "index out of range")
      return base[position]
    }
    set {
      precondition(UInt(bitPattern: position) < UInt(bitPattern: count), "index out of range")
      base[position] = newValue
    }
  }

  /// Appends an element; its position.
  @inline(__always) @discardableResult
  mutating func append(_ element: Element) -> Int {
    if count == capacity { grow(to: count + 1) }
    (base + count).initialize(to: element)
    count += 1
    return count - 1
  }

  /// Room for `more` elements after the last, to be set before they are read; the first's position.
  @inline(__always)
  mutating func reserve(_ more: Int) -> Int {
    let first = count
    if capacity - count < more { grow(to: count + more) }
    count += more
    return first
  }

  /// `more` elements after the last, each `element`.
  mutating func append(repeating element: Element, count more: Int) {
    let first = reserve(more)
    (base + first).initialize(repeating: element, count: more)
  }

  mutating func removeAll() { count = 0 }

  mutating func removeLast() {
    precondition(count > 0)
    count -= 1
  }

  private mutating func grow(to needed: Int) {
    let newCapacity = max(capacity * 2, needed)
    let grown = UnsafeMutablePointer<Element>.allocate(capacity: newCapacity)
    grown.moveInitialize(from: base, count: count)
    base.deallocate()
    base = grown
    capacity = newCapacity
  }
}

/// The caller's strings and data copied into one block that stays put while the archive is written
/// (`Text` points into it).
struct ByteArena: ~Copyable {
  private let block: UnsafeMutableRawBufferPointer
  private var used = 0

  init(_ pairs: [ArchivedDictionaryEntry]) {
    func size(_ value: ArchivedValue) -> Int {
      switch value {
      case .string(let string, _): string.utf8.count
      case .data(let data, _): data.count
      default: 0
      }
    }
    var total = 0
    for pair in pairs { total += size(pair.key) + size(pair.value) }
    block = .allocate(byteCount: max(total, 1), alignment: 1)
  }

  deinit { block.deallocate() }

  /// The string's text in the block; nil when it is not ASCII (or would not fit).
  mutating func text(_ string: String) -> Text? {
    return string.withUTF8InPlace { utf8 -> Text? in
      guard Self.isASCII(UnsafeRawBufferPointer(utf8)) else { return nil }
      return copy(UnsafeRawBufferPointer(utf8))
    }
  }

  /// The data's bytes in the block; nil when they would not fit.
  mutating func bytes(_ data: Data) -> Text? {
    data.withUnsafeBytes { copy($0) }
  }

  private mutating func copy(_ bytes: UnsafeRawBufferPointer) -> Text? {
    guard used + bytes.count <= block.count else { return nil }
    let start = block.baseAddress! + used
    if let base = bytes.baseAddress { start.copyMemory(from: base, byteCount: bytes.count) }
    used += bytes.count
    return Text(UnsafeRawBufferPointer(start: start, count: bytes.count))
  }

  /// Whether every byte is below 0x80, eight at a time.
  static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
    guard let base = bytes.baseAddress else { return true }
    var position = 0
    var bits: UInt64 = 0
    while position + 8 <= bytes.count {
      bits |= base.loadUnaligned(fromByteOffset: position, as: UInt64.self)
      position += 8
    }
    while position < bytes.count {
      bits |= UInt64(base.load(fromByteOffset: position, as: UInt8.self))
      position += 1
    }
    return bits & 0x8080_8080_8080_8080 == 0
  }
}

/// The flat buffers of one writer: a writer takes a set from the pool and gives it back when done,
/// so that writing an archive allocates little more than its bytes.
// @unchecked Sendable: the pool hands a set to one writer at a time, and only that writer touches
// the buffers until it gives the set back.
final class WriterMemory: @unchecked Sendable {
  let reader = UnsafeMutablePointer<ReaderMemory>.allocate(capacity: 1)
  let layout = UnsafeMutablePointer<Layout>.allocate(capacity: 1)
  let flattener = UnsafeMutablePointer<Flattener>.allocate(capacity: 1)

  init() {
    reader.initialize(to: ReaderMemory())
    layout.initialize(to: Layout())
    flattener.initialize(to: Flattener())
  }

  deinit {
    reader.deinitialize(count: 1)
    reader.deallocate()
    layout.deinitialize(count: 1)
    layout.deallocate()
    flattener.deinitialize(count: 1)
    flattener.deallocate()
  }

  // A few sets: as many as threads write at once, as a rule.
  private static let pool = Locked<[WriterMemory]>([])
  private static let pooledSets = 8
  // A set grown past this many laid-out objects or texts is let go rather than kept.
  private static let pooledObjects = 4096

  static func take() -> WriterMemory {
    pool.withLock { $0.popLast() } ?? WriterMemory()
  }

  static func give(_ memory: WriterMemory) {
    guard memory.layout.pointee.objects.capacity <= pooledObjects,
      memory.layout.pointee.interner.count <= pooledObjects
    else { return }
    pool.withLock { sets in
      if sets.count < pooledSets { sets.append(memory) }
    }
  }
}

import PortableFoundation

// The in-place read of a binary plist. Its tree twin: `BinaryPropertyListReader`
// (BinaryPropertyListReader.swift), whose parser it runs with a builder that builds nothing.
// Its one-pass check (BinaryLinearScan.swift) is held to the reader's walk, and a view made
// from a writer's facts (`init(written:_:limits:verifying:)`) to the view checking the bytes
// makes, by `BinaryViewDifferential` (below) in Tests/PropertyListTests/BinaryScanTests.swift,
// and by the fuzz harnesses Fuzz/Sources/FuzzCommon/RoundTripHarness.swift (FuzzBinaryPlist),
// Fuzz/Sources/FuzzKeyedArchive/KeyedArchiveHarness.swift (written views) and
// Fuzz/Sources/FuzzResumeData/main.swift and Fuzz/Sources/FuzzBatch/main.swift
// (`checksWrittenViews`).

/// A binary property list checked exactly as ``BinaryPropertyListReader`` checks it, then read in
/// place: no value tree is built, and callers read only the objects they need.
///
/// Construction runs the reader's own parser (with a builder that builds nothing), so it accepts
/// exactly the inputs the reader accepts and throws exactly the reader's errors: first as one pass
/// over every object, which accepts the files writers produce, and, when that pass cannot decide,
/// as the reader's own walk from the top (see `BinaryLinearScan.swift`). Every object reachable
/// from the top has then been checked, and where its contents lie recorded, so the accessors of
/// `objects`, which must only be given such objects (found by following references from
/// `topObject`), read without checking again. The view reads its own copy of the bytes (or, made
/// with `init(borrowingBytes:limits:)`, the caller's, which must outlive it).
package final class BinaryPropertyListView {
  // The bytes the parser reads: the view's own copy of the input, given back on deinit, or, for a
  // view made with `init(borrowingBytes:limits:)`, the caller's.
  private let storage: UnsafeMutableRawBufferPointer
  private let ownsStorage: Bool
  private let parser: BinaryParser<SpanBuilder>
  /// The top-level object.
  package let topObject: Int
  /// Whether every dictionary has at most 64 entries, ASCII keys only, and no key twice: then a
  /// key found in the bytes is the key the reader's (folded) dictionary holds, with the same value,
  /// and keys compare as bytes. (When the one-pass scan decided, every dictionary of the file
  /// counts, reachable or not: false is then only more cautious.)
  package let dictionariesArePlain: Bool
  /// The largest UID reachable from the top (or, when the one-pass scan decided, in the whole
  /// file: never lower), or nil when there is none.
  package let maximumUID: UInt64?

  /// Whether the one-pass scan accepted the file (rather than the walk from the top).
  package let wasScanned: Bool

  /// Checks a binary property list.
  ///
  /// - Parameters:
  ///   - walkOnly: skip the one-pass scan and walk from the top (for comparing the two).
  ///   - referenceScan: make the one pass with the scan written in Swift, which the one in C must
  ///     agree with (for comparing the two).
  /// - Throws: the ``PropertyListError`` `BinaryPropertyListReader.read` throws for these bytes.
  package convenience init(
    validating data: Data, limits: PropertyListLimits, walkOnly: Bool = false,
    referenceScan: Bool = false
  ) throws {
    try self.init(
      checking: data.withUnsafeBytes { try Self.copy($0, limits: limits) }, limits: limits,
      walkOnly: walkOnly, referenceScan: referenceScan)
  }

  /// Whether `bytes` are long enough for a binary plist and start with its header: false says
  /// `init(validating:limits:)` would throw, found without making its error (a caller that only
  /// asks whether the bytes are a binary plist, of XML most of the time, saves that).
  package static func mayBeBinary(_ bytes: UnsafeRawBufferPointer) -> Bool {
    // Header (8) + at least one one-byte object + trailer (32), as `validate` requires.
    bytes.count >= 8 + 1 + 32 && BinaryBytes.hasPrefix(bytes, "bplist0")
  }

  /// `init(validating:limits:)` of bytes in memory the caller keeps (a plist inside another's
  /// view), copied as a `Data` would be, without making one.
  package convenience init(
    validatingBytes bytes: UnsafeRawBufferPointer, limits: PropertyListLimits
  )
    throws
  {
    try self.init(checking: Self.copy(bytes, limits: limits), limits: limits)
  }

  /// `init(validatingBytes:limits:)` without the copy: the view reads `bytes` where they are, so
  /// the caller must keep them alive and unchanged for as long as the view (and anything read
  /// from it) lives. For a plist checked and read within one call, such as a request archive
  /// inside a blob that is only diagnosed.
  package convenience init(borrowingBytes bytes: UnsafeRawBufferPointer, limits: PropertyListLimits)
    throws
  {
    try Self.checkInput(bytes, limits: limits)
    try self.init(
      checking: UnsafeMutableRawBufferPointer(mutating: bytes), limits: limits, owned: false)
  }

  // Checks the copy `copy(_:limits:)` made, which the view then owns (or gives back on failure),
  // or, when not `owned`, bytes the caller keeps.
  private init(
    checking storage: UnsafeMutableRawBufferPointer, limits: PropertyListLimits,
    owned: Bool = true, walkOnly: Bool = false, referenceScan: Bool = false
  ) throws {
    do {
      var parser = try BinaryParser<SpanBuilder>(UnsafeRawBufferPointer(storage), limits: limits)
      // One pass in index order accepts what writers produce; the walk from the top decides the
      // rest, with the reader's exact error.
      wasScanned = !walkOnly && parser.scanEveryObject(reference: referenceScan)
      if !wasScanned {
        parser.builder.keyStack.reserveCapacity(64)
        _ = try parser.readTop()
      }
      dictionariesArePlain = parser.builder.dictionariesArePlain
      maximumUID = parser.builder.maximumUID
      topObject = parser.trailer.topObject
      self.parser = parser
    } catch {
      if owned { ReusableBlocks.give(storage.baseAddress!) }
      throw error
    }
    self.storage = storage
    ownsStorage = owned
    objects = Self.objects(storage, self.parser)
  }

  /// A view of a plist this package's own writer has just laid out, made from what the writer
  /// knows of it instead of checking the bytes again; nil when `facts` put it beyond `limits`,
  /// or when its trailer or offset table do not read (the caller then checks it with
  /// `init(validating:limits:)`, which gives the exact outcome).
  ///
  /// - Precondition: `facts` are true of `data`: every object lies where the offset table says and
  ///   reads as a binary plist object, `facts.contents` records each one's contents as the
  ///   one-pass scan does (each object once), and the scan would accept the plist (no container
  ///   shared or referenced from a later one). Debug builds, and any build once
  ///   `checksWrittenViews` is set, check the view against `init(validating:limits:)` and stop on
  ///   any difference.
  ///
  /// - Parameter verifying: false skips that check (for tests and fuzzing, which compare the two
  ///   views themselves).
  package init?(
    written data: Data, _ facts: WrittenPlistFacts, limits: PropertyListLimits,
    verifying: Bool = true
  ) {
    // The scan's limits, from what the writer counted; the checks the walk would make beyond
    // these are met by what the writer writes.
    guard facts.depth <= limits.maximumDepth, facts.visits <= limits.maximumVisitedElements,
      facts.longestValue <= limits.maximumValueLength,
      let storage = try? data.withUnsafeBytes({ try Self.copy($0, limits: limits) })
    else { return nil }
    guard
      let parser = try? BinaryParser<SpanBuilder>(UnsafeRawBufferPointer(storage), limits: limits)
    else {
      ReusableBlocks.give(storage.baseAddress!)
      return nil
    }
    // The parser starts with nothing recorded.
    let objectCount = parser.trailer.objectCount
    for contents in facts.contents {
      // An object the plist does not have: not what the writer wrote; left to the check.
      guard UInt(bitPattern: contents.object) < UInt(objectCount) else {
        ReusableBlocks.give(storage.baseAddress!)
        return nil
      }
      (parser.cache + contents.object).initialize(
        to: ByteSpan(start: contents.start, count: contents.count))
      parser.expandedSize[contents.object] = 1
    }
    wasScanned = true
    dictionariesArePlain = facts.dictionariesArePlain
    maximumUID = facts.maximumUID
    topObject = parser.trailer.topObject
    self.parser = parser
    self.storage = storage
    ownsStorage = true
    objects = Self.objects(storage, self.parser)
    if verifying, _isDebugAssertConfiguration() || Self.checksWrittenViews.withLock({ $0 }) {
      if let difference = BinaryViewDifferential.difference(written: self, data, limits: limits) {
        fatalError(
          "a view made from its writer's facts differs from the checked one: \(difference)")
      }
    }
  }

  /// A dictionary of more entries than this is not plain (`dictionariesArePlain`).
  package static let plainDictionaryLimit = PropertyListDictionary.indexThreshold

  /// Whether every view made by `init(written:_:limits:)` is checked against the view
  /// `init(validating:limits:)` makes (always in debug builds): for fuzzing.
  package static let checksWrittenViews = Locked<Bool>(false)

  /// The input's bytes in a block of the view's own, after the header and trailer are checked in
  /// place: input that is not a binary plist at all (a large XML one, or noise) is then refused
  /// without being copied.
  @inline(__always)
  private static func copy(_ bytes: UnsafeRawBufferPointer, limits: PropertyListLimits) throws
    -> UnsafeMutableRawBufferPointer
  {
    try checkInput(bytes, limits: limits)
    // A block the thread reuses (see `ReusableBlocks`) rather than `allocate`, which on Linux
    // takes the slower aligned path.
    guard let block = ReusableBlocks.take(max(bytes.count, 1)) else {
      throw PropertyListError(.limitExceeded, "no memory for an input of \(bytes.count) bytes")
    }
    let storage = UnsafeMutableRawBufferPointer(start: block, count: bytes.count)
    storage.copyMemory(from: bytes)
    return storage
  }

  // The input's size and its header and trailer, checked in place, with the reader's errors.
  @inline(__always)
  private static func checkInput(_ bytes: UnsafeRawBufferPointer, limits: PropertyListLimits)
    throws
  {
    guard bytes.count <= limits.maximumInputSize else {
      throw PropertyListError(
        .limitExceeded,
        "input of \(bytes.count) bytes exceeds the limit of \(limits.maximumInputSize)")
    }
    _ = try BinaryParser<SpanBuilder>.validate(bytes, limits: limits)
  }

  @inline(__always)
  private static func objects(
    _ storage: UnsafeMutableRawBufferPointer, _ parser: borrowing BinaryParser<SpanBuilder>
  ) -> BinaryObjects {
    BinaryObjects(
      base: UnsafeRawPointer(storage.baseAddress!), objectAreaEnd: parser.trailer.offsetTableOffset,
      objectOffsets: UnsafePointer(parser.offsets), spans: UnsafePointer(parser.cache),
      recorded: UnsafePointer(parser.expandedSize), referenceWidth: parser.trailer.objectRefSize)
  }

  deinit {
    if ownsStorage { ReusableBlocks.give(storage.baseAddress!) }
  }

  private var bytes: UnsafeRawBufferPointer { parser.bytes }

  /// The objects, read in place: what every reader of the view goes through (the accessors of a
  /// struct inline into the other layers' readers; a class's methods would not).
  package let objects: BinaryObjects

  // The recorded contents of an object (see `BinaryObjects.contents`).
  private func contents(_ object: Int) -> (count: Int, start: Int) { objects.contents(object) }

  /// The first object whose recorded contents differ from another view's of the same bytes, among
  /// those `other` recorded.
  fileprivate func differingContents(_ other: BinaryPropertyListView) -> Int? {
    (0..<objectCount).first { object in
      other.parser.expandedSize[object] > 0
        && (parser.expandedSize[object] <= 0 || contents(object) != other.contents(object))
    }
  }

  // MARK: Layout, for checking that a writer would reproduce these bytes

  /// The input's bytes.
  package var rawBytes: UnsafeRawBufferPointer { bytes }

  /// Whether the input starts `bplist00`, the version every writer writes (the view reads any
  /// `bplist0x`).
  package var isVersion00: Bool { BinaryBytes.hasPrefix(bytes, "bplist00") }

  /// The number of objects in the offset table (reachable or not).
  package var objectCount: Int { parser.trailer.objectCount }

  /// The trailer's top object index.
  package var topObjectIndex: Int { parser.trailer.topObject }

  /// Where the offset table starts: the end of the object area.
  package var offsetTableOffset: Int { parser.trailer.offsetTableOffset }

  /// The trailer's reference size, in bytes.
  package var referenceSize: Int { parser.trailer.objectRefSize }

  /// The trailer's offset size, in bytes.
  package var offsetSize: Int { parser.trailer.offsetIntSize }

  /// Where an object starts, from the offset table: any index below `objectCount`, read or not.
  package func offset(_ object: Int) -> Int { parser.offsets[object] }

  /// A scalar object (anything but an array or a dictionary) as the reader returns it.
  package func scalar(_ object: Int) -> PropertyListValue? {
    switch objects.kind(object) {
    case .boolean: return .boolean(objects.boolean(object))
    case .integer: return .integer(objects.integer(object))
    case .real: return .real(objects.real(object))
    case .date:
      let offset = parser.offsets[object]
      return .date(
        Date(
          timeIntervalSinceReferenceDate: Double(
            bitPattern: BinaryBytes.readUInt64(bytes, offset + 1))))
    case .data: return .data(objects.data(object))
    case .string: return .string(objects.string(object))
    case .uid: return .uid(objects.uid(object))
    case .array, .dictionary: return nil
    }
  }
}

/// Where a written object's contents lie, as the one-pass scan records them: for a string, data,
/// array or dictionary, where they start and their count (characters, bytes, elements or
/// entries).
package struct WrittenContents: BitwiseCopyable {
  /// The object's index.
  package var object: Int
  /// Where the contents start.
  package var start: Int
  /// Characters, bytes, elements or entries.
  package var count: Int

  /// Object `object`'s contents, at `start`, of `count`.
  @inline(__always)
  package init(object: Int, start: Int, count: Int) {
    self.object = object
    self.start = start
    self.count = count
  }
}

/// What a writer knows of a binary plist it has just laid out: what the one-pass scan would find
/// in it (see `BinaryPropertyListView(written:_:limits:)`).
package struct WrittenPlistFacts {
  /// The contents of every string, data, array and dictionary, each once (objects without an
  /// entry have none).
  package var contents: UnsafeBufferPointer<WrittenContents>
  /// `BinaryPropertyListView.dictionariesArePlain`.
  package var dictionariesArePlain: Bool
  /// `BinaryPropertyListView.maximumUID`.
  package var maximumUID: UInt64?
  /// The deepest nesting of containers, the top one counting 1 (a bound serves: a larger one
  /// only sends the caller to the check).
  package var depth: Int
  /// One for the top, one per reference from a container: what the scan counts.
  package var visits: Int
  /// The longest string (in bytes) or data.
  package var longestValue: Int

  /// The facts, as the writer counted them.
  package init(
    contents: UnsafeBufferPointer<WrittenContents>, dictionariesArePlain: Bool,
    maximumUID: UInt64?, depth: Int, visits: Int, longestValue: Int
  ) {
    self.contents = contents
    self.dictionariesArePlain = dictionariesArePlain
    self.maximumUID = maximumUID
    self.depth = depth
    self.visits = visits
    self.longestValue = longestValue
  }
}

/// The one-pass scan against the walk from the top, for tests and fuzzing.
@_spi(Differential)
public enum BinaryViewDifferential {
  /// Whether the one-pass scan accepts these bytes by itself (without the walk).
  public static func scanAccepts(_ data: Data, limits: PropertyListLimits = .default) -> Bool {
    (try? BinaryPropertyListView(validating: data, limits: limits))?.wasScanned ?? false
  }

  /// Nil when the one-pass scan in C and the reference scan written in Swift decide alike: both
  /// accept, with the same `dictionariesArePlain`, `maximumUID` and contents recorded for every
  /// object, or both leave the file to the walk (and so give its same outcome); else what differs.
  public static func scanDifference(_ data: Data, limits: PropertyListLimits = .default) -> String?
  {
    let inC = Result { try BinaryPropertyListView(validating: data, limits: limits) }
    let inSwift = Result {
      try BinaryPropertyListView(validating: data, limits: limits, referenceScan: true)
    }
    switch (inC, inSwift) {
    case (.failure(let first), .failure(let second)):
      return "\(first)" == "\(second)" ? nil : "errors differ: \(first) vs \(second)"
    case (.success, .failure(let error)), (.failure(let error), .success):
      return "one scan's view refuses what the other's accepts: \(error)"
    case (.success(let c), .success(let swift)):
      if c.wasScanned != swift.wasScanned {
        return "the scan in C \(c.wasScanned ? "accepts" : "gives up on") the file, the reference "
          + (swift.wasScanned ? "accepts it" : "gives up")
      }
      if c.dictionariesArePlain != swift.dictionariesArePlain {
        return "dictionariesArePlain differs: \(c.dictionariesArePlain) in C"
      }
      if c.maximumUID != swift.maximumUID {
        return "maximumUID differs: \(String(describing: c.maximumUID)) in C"
      }
      return (c.differingContents(swift) ?? swift.differingContents(c)).map {
        "object \($0): recorded contents differ"
      }
    }
  }

  /// Whether every view made from what its writer knows of the bytes is checked against the view
  /// that checking them makes, stopping the process on any difference (always so in debug
  /// builds): for fuzzing.
  public static var checksWrittenViews: Bool {
    get { BinaryPropertyListView.checksWrittenViews.withLock { $0 } }
    set { BinaryPropertyListView.checksWrittenViews.withLock { $0 = newValue } }
  }

  /// Nil when a view made from its writer's facts is what checking the same bytes makes: the same
  /// top object, `dictionariesArePlain` and `maximumUID`, and the same contents recorded for
  /// every object; else what differs.
  package static func difference(
    written: BinaryPropertyListView, _ data: Data, limits: PropertyListLimits
  ) -> String? {
    let checked: BinaryPropertyListView
    do {
      checked = try BinaryPropertyListView(validating: data, limits: limits)
    } catch {
      return "the check refuses it: \(error)"
    }
    if !checked.wasScanned { return "the one-pass scan does not accept it" }
    if checked.topObject != written.topObject { return "top objects differ" }
    if checked.dictionariesArePlain != written.dictionariesArePlain {
      return "dictionariesArePlain differs"
    }
    if checked.maximumUID != written.maximumUID { return "maximumUID differs" }
    return (checked.differingContents(written) ?? written.differingContents(checked)).map {
      "object \($0): recorded contents differ"
    }
  }

  /// Nil when the view checked with the scan and the view checked by walking agree: the same
  /// error, or both accepted with the same contents recorded for every object the walk reached,
  /// the scan's `dictionariesArePlain` only where the walk's holds, and its `maximumUID` no lower;
  /// else what differs.
  ///
  /// The scan in C is first compared with the reference scan (`scanDifference`).
  public static func difference(_ data: Data, limits: PropertyListLimits = .default) -> String? {
    if let difference = scanDifference(data, limits: limits) {
      return "the scans in C and Swift differ: \(difference)"
    }
    let scanned = Result { try BinaryPropertyListView(validating: data, limits: limits) }
    let walked = Result {
      try BinaryPropertyListView(validating: data, limits: limits, walkOnly: true)
    }
    switch (scanned, walked) {
    case (.failure(let first), .failure(let second)):
      return "\(first)" == "\(second)" ? nil : "errors differ: \(first) vs \(second)"
    case (.success, .failure(let error)):
      return "the scan accepts what the walk refuses: \(error)"
    case (.failure(let error), .success):
      return "the scan refuses what the walk accepts: \(error)"
    case (.success(let scan), .success(let walk)):
      if scan.topObject != walk.topObject { return "top objects differ" }
      if scan.dictionariesArePlain, !walk.dictionariesArePlain {
        return "the scan calls dictionaries plain where the walk does not"
      }
      if let walkMaximum = walk.maximumUID, (scan.maximumUID ?? 0) < walkMaximum {
        return "the scan's largest UID is below the walk's"
      }
      return scan.differingContents(walk).map { "object \($0): recorded contents differ" }
    }
  }
}

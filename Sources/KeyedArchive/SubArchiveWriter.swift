import PortableFoundation
@_spi(InPlace) @_spi(Differential) @_spi(Writing) import PropertyList

// Archiving one object of an archive as the root of an archive of its own (a Network.framework
// blob's requests and response, which CFNetwork's blobs keep as archives apart) decodes the object
// to a value tree, has `KeyedArchiveBuilder` lay it out as NSKeyedArchiver would, and has
// `ArchiverFlattener` and the binary writer write that. For the shapes requests and responses are
// made of, this file does the same straight from the bytes of the archive read in place: the
// builder's layout and the flattener's sharing, step for step, and the writer's bytes. Anything
// else (dates, sets, UUIDs, NSNull, non-ASCII strings, containers held inline, cycles) is left to
// the tree: the writer returns nil.
//
// A request is a few dozen objects, and this runs for every Network.framework blob read, so it is
// written for speed:
// - every text (a key, a string, a class name) gets an ID the first time it is met in the archive
//   read, and the builder's and the flattener's sharing look IDs up in arrays;
// - the layout and the sharing tables are plain values in flat buffers, kept in a pool from one
//   archive to the next (`WriterMemory`): no allocation per object, no reference counting;
// - the flattener writes each object's bytes as it flattens it, with one-byte references (what
//   an archive of up to 255 objects takes), and flattens again with wider ones for a larger one.
//
// This file holds the writer's entry points; its parts are in files of their own:
// SubArchiveValues.swift (texts and scalars), SubArchiveTextTable.swift (text IDs),
// SubArchiveMemory.swift (flat buffers and their pool), SubArchiveViewReader.swift (reading the
// archive into the layout), SubArchiveLayout.swift (the builder's layout and sharing),
// SubArchiveFlattener.swift (the flattener's sharing) and SubArchiveByteWriter.swift (the bytes).
// SubArchiveResponseHeaders.swift reads a written response's header fields in place.
//
// Its tree twin: `KeyedArchive(root: decodeValue(uid)).encoded()` (ArchiveDecoding.swift,
// KeyedArchiveBuilder.swift, ArchiverFlattener.swift and PropertyList's
// BinaryPropertyListWriter.swift); `encodedDictionary`'s, `KeyedArchive(root: .dictionary(…))`
// encoded the same way. Held equal by the differentials of `SubArchiveDifferential` (below) and
// `ResumeDifferential.writerDifference` in Tests/ResumeDataTests/SubArchiveTests.swift and
// Tests/KeyedArchiveTests/FuzzRegressionTests.swift, and by the fuzz harnesses
// Fuzz/Sources/FuzzKeyedArchive/KeyedArchiveHarness.swift (check 5) and
// Fuzz/Sources/FuzzResumeData/main.swift (`writerDifference`).

extension KeyedArchiveView {
  /// Most objects the sub-archive writer visits, counting each reference to a shared object (as
  /// decoding does), before it gives up: an archive whose objects are shared over and over would
  /// otherwise make its work grow exponentially.
  static let subArchiveVisits = 10_000

  /// `KeyedArchive(root: decodeValue(uid), rootKey: rootKey.rawValue).encoded()` of this
  /// archive, written from its bytes; nil when the object holds anything the writer does not
  /// follow, or when decoding it would fail.
  package func archivedAsRoot(
    _ uid: UInt64, rootKey: ArchiveRootKey = .rootObjectKey, maximumDepth: Int = 64
  ) -> Data? {
    var writer = SubArchiveWriter(view: self)
    return writer.archivedAsRoot(uid, rootKey: rootKey, maximumDepth: maximumDepth)
  }

  /// Whether `archivedAsRoot(uid)` would write the object, found without writing it: then
  /// `decodeValue(uid)` succeeds too, under limits of at least 256 levels and 100,000 visits.
  ///
  /// - Parameter written: objects that `archivedAsRoot` has written on their own, which are then
  ///   known to decode and are not followed again.
  package func decodesFromBytes(
    _ uid: UInt64, written: [UInt64] = [], maximumDepth: Int = 64
  ) -> Bool {
    var writer = SubArchiveWriter(view: self)
    return writer.decodesFromBytes(uid, written: written, maximumDepth: maximumDepth)
  }

  /// Whether the most derived class name of a checked class object (`mostDerivedClassName`) has
  /// `prefix` as `String.hasPrefix` reads it, compared as bytes for an ASCII name.
  package func mostDerivedClassName(_ classUID: UInt64, hasPrefix prefix: StaticString) -> Bool {
    let name = ViewReader.mostDerivedName(of: object(classUID), table)
    if let bytes = table.asciiBytes(name) {
      // ASCII against ASCII: no character of the name can join the prefix's last one.
      return bytes.count >= prefix.utf8CodeUnitCount
        && memcmp(bytes.baseAddress!, prefix.utf8Start, prefix.utf8CodeUnitCount) == 0
    }
    return table.isKind(name, .string) && table.string(name).hasPrefix(prefix.description)
  }
}

/// `KeyedArchiveView.archivedAsRoot` and `decodesFromBytes` for several objects of one archive
/// (a Network.framework blob's requests, response and root), with the memory of one writer.
package struct SubArchiveWriter: ~Copyable {
  private var reader: ViewReader
  private let memory: WriterMemory

  /// A writer for objects of `view`.
  package init(view: KeyedArchiveView) {
    memory = WriterMemory.take()
    memory.layout.pointee.interner.reset(objectCount: view.plist.objectCount)
    reader = ViewReader(view: view, memory.reader)
  }

  deinit { WriterMemory.give(memory) }

  /// `KeyedArchiveView.archivedAsRoot(uid, rootKey:)`.
  package mutating func archivedAsRoot(
    _ uid: UInt64, rootKey: ArchiveRootKey = .rootObjectKey, maximumDepth: Int = 64
  ) -> Data? {
    reader.start(maximumDepth: maximumDepth, known: [])
    let layout = memory.layout
    layout.pointee.reset()
    guard let root = reader.encode(uid, &layout.pointee) else { return nil }
    return memory.flattener.pointee.encoded(
      &layout.pointee, rootUID: root, rootKey: rootKey.constant)
  }

  /// `archivedAsRoot(uid)`, with a view of the bytes made from what the writer knows of them
  /// (`BinaryPropertyListView(written:_:limits:)`) instead of checking them again: nil when they lie
  /// beyond `limits`.
  ///
  /// - Parameter verifying: as `BinaryPropertyListView(written:_:limits:verifying:)` takes it.
  package mutating func archivedAsRootWithView(
    _ uid: UInt64, limits: PropertyListLimits, maximumDepth: Int = 64, verifying: Bool = true
  ) -> (bytes: Data, view: BinaryPropertyListView?)? {
    guard let bytes = archivedAsRoot(uid, maximumDepth: maximumDepth) else { return nil }
    let view = BinaryPropertyListView(
      written: bytes, memory.flattener.pointee.writtenFacts, limits: limits, verifying: verifying)
    return (bytes, view)
  }

  /// `KeyedArchiveView.decodesFromBytes(uid, written:)`.
  package mutating func decodesFromBytes(
    _ uid: UInt64, written: [UInt64] = [], maximumDepth: Int = 64
  ) -> Bool {
    reader.start(maximumDepth: maximumDepth, known: written)
    memory.layout.pointee.reset()
    return reader.encode(uid, &memory.layout.pointee) != nil
  }
}

extension ArchiveRootKey {
  /// The writer's constant for the key.
  var constant: Constant {
    switch self {
    case .rootObjectKey: .rootObjectKey
    case .root: .root
    }
  }
}

extension KeyedArchive {
  /// `KeyedArchive(root: .dictionary(pairs, mutable: mutable), rootKey: rootKey).encoded(as:
  /// .binary)`, written straight, for a dictionary of ASCII string keys and plain values (ASCII
  /// strings, numbers, booleans, data, null), as a resume blob's root is; nil for anything else.
  package static func encodedDictionary(
    _ pairs: [ArchivedDictionaryEntry], mutable: Bool, rootKey: String
  ) -> Data? {
    guard let rootKeyText = ArchiveRootKey(rawValue: rootKey)?.constant else { return nil }
    var arena = ByteArena(pairs)
    let memory = WriterMemory.take()
    defer { WriterMemory.give(memory) }
    let layout = memory.layout
    layout.pointee.interner.reset(objectCount: 0)
    layout.pointee.reset()
    guard let uid = encodedDictionary(pairs, mutable: mutable, &layout.pointee, &arena) else {
      return nil
    }
    return memory.flattener.pointee.encoded(&layout.pointee, rootUID: uid, rootKey: rootKeyText)
  }

  /// Lays out the root dictionary of `encodedDictionary`; its UID.
  private static func encodedDictionary(
    _ pairs: [ArchivedDictionaryEntry], mutable: Bool, _ layout: inout Layout,
    _ arena: inout ByteArena
  ) -> UInt64? {
    let uid = layout.placeholder()
    let count = pairs.count
    let keys = layout.uidLists.reserve(count)
    let values = layout.uidLists.reserve(count)
    // Every key, then every value, as NSDictionary encodes them. Read in place by index: the
    // pairs of `enumerated()` are copies, each value retained and released.
    for position in pairs.indices {
      guard case .string = pairs[position].key,
        let key = layout.encodeOwned(pairs[position].key, &arena)
      else {
        return nil
      }
      layout.uidLists[keys + position] = key
    }
    for position in pairs.indices {
      guard let value = layout.encodeOwned(pairs[position].value, &arena) else { return nil }
      layout.uidLists[values + position] = value
    }
    let classUID = layout.fixedClass(mutable ? .mutableDictionary : .dictionary)
    let fields = layout.fields.append(.uids(layout.id(.keys), keys, count))
    layout.fields.append(.uids(layout.id(.objects), values, count))
    layout.fields.append(.uid(layout.id(.classKey), classUID))
    layout.objects[Int(uid)] = .instance(fields, 3)
    return uid
  }
}

/// The sub-archive writer for tests and fuzzing outside the package.
@_spi(Differential)
public enum SubArchiveDifferential {
  /// `KeyedArchiveView.archivedAsRoot` of each of the first `limit` objects of the archive `data`
  /// read in place, by UID (those it writes); nil when the archive is not read in place.
  public static func archivedAsRoot(
    _ data: Data, firstObjects limit: Int, limits: PropertyListLimits = .default
  ) -> [UInt64: Data]? {
    guard let view = KeyedArchiveView(data, limits: limits) else { return nil }
    var archives: [UInt64: Data] = [:]
    // One writer for all, as a Network.framework blob's objects are written: what one object
    // leaves in the reused memory must not change the next one's bytes.
    var writer = SubArchiveWriter(view: view)
    for uid in 1..<UInt64(max(1, min(view.count, limit))) {
      if let bytes = writer.archivedAsRoot(uid) { archives[uid] = bytes }
    }
    return archives
  }

  /// For the first `limit` objects of the archive `data` read in place that `archivedAsRoot`
  /// writes, the views of their bytes made from what the writer knows of them, against the views
  /// checking the bytes makes: how many were made (none for an object beyond `limits`), and how
  /// each that differs does; nil when the archive is not read in place. The written archives are
  /// read under `writtenLimits` (by default `limits`).
  public static func writtenViews(
    _ data: Data, firstObjects limit: Int, limits: PropertyListLimits = .default,
    writtenLimits: PropertyListLimits? = nil
  ) -> (made: Int, differences: [UInt64: String])? {
    let writtenLimits = writtenLimits ?? limits
    guard let view = KeyedArchiveView(data, limits: limits) else { return nil }
    var writer = SubArchiveWriter(view: view)
    var made = 0
    var differences: [UInt64: String] = [:]
    for uid in 1..<UInt64(max(1, min(view.count, limit))) {
      guard
        let written = writer.archivedAsRootWithView(uid, limits: writtenLimits, verifying: false),
        let writtenView = written.view
      else { continue }
      made += 1
      if let difference = BinaryViewDifferential.difference(
        written: writtenView, written.bytes, limits: writtenLimits)
      {
        differences[uid] = difference
      }
    }
    return (made, differences)
  }

  /// The first of the first `limit` objects of the archive `data` read in place for which
  /// `KeyedArchiveView.decodesFromBytes` and `archivedAsRoot` disagree (one accepts, the other
  /// does not), or nil.
  public static func checkDisagreement(
    _ data: Data, firstObjects limit: Int, limits: PropertyListLimits = .default
  ) -> UInt64? {
    guard let view = KeyedArchiveView(data, limits: limits) else { return nil }
    for uid in 1..<UInt64(max(1, min(view.count, limit)))
    where view.decodesFromBytes(uid) != (view.archivedAsRoot(uid) != nil) {
      return uid
    }
    return nil
  }
}

import PortableFoundation
@_spi(InPlace) import PropertyList

// A layout conversion renames keys and nothing else: the slot keys of the request object, its
// property-list key, and the root key under `$top`. For an archive in the writer's own layout that
// is a rewrite of a few string objects in its bytes; decoding the object graph, rebuilding it and
// encoding it again cost twenty times as much.
//
// Its tree twin: `converted(to:)` then `encoded()` (rebuilding the request, then the writer), which
// `encodedConverted(to:)` falls back to when `renaming(to:)` gives nil. Held equal by the tests of
// "Request layout conversion by renaming in place"
// (Tests/KeyedArchiveTests/RequestArchiveTests.swift) and by the fuzz harness
// Fuzz/Sources/FuzzKeyedArchive/KeyedArchiveHarness.swift (check 4).

extension URLRequestArchive {
  /// The archive in `target`'s layout, encoded: `converted(to: target).encoded()`, written by
  /// renaming the keys in the bytes when the archive was read in place, has the envelope
  /// NSKeyedArchiver writes, and the renamed keys are strings of their own that stay distinct from
  /// every other key. Every other object then keeps its index and its bytes; for an archive in the
  /// layout NSKeyedArchiver and CFNetwork write, that is byte for byte what rebuilding writes.
  /// (Renaming reads no more of the graph than the request's own object: an archive whose graph
  /// does not decode, a cycle say, has its keys renamed where rebuilding would fail.)
  ///
  /// - Throws: ``KeyedArchiveError`` if the archive must be rebuilt and cannot be.
  public func encodedConverted(to target: Layout) throws -> Data {
    if let bytes = renamedInPlace(to: target) { return bytes }
    return try converted(to: target).encoded()
  }

  /// The renaming of `encodedConverted(to:)` alone: nil when the archive must be rebuilt instead
  /// (for tests that compare the two ways).
  @_spi(Differential)
  public func renamedInPlace(to target: Layout) -> Data? {
    renaming(to: target)?.bytes
  }

  /// The renamed bytes, and whether they read as this request in the target layout with the same
  /// slots (see `renamingKeys`).
  private func renaming(to target: Layout) -> (bytes: Data, keepsRequest: Bool)? {
    // An archive only under the other root key is left to rebuilding.
    guard target != layout, let fast, fast.readsOwnBytes else { return nil }
    return fast.withRequest { Self.renamingKeys($0, from: layout, to: target) }
  }

  /// `renamedInPlace(to:)` and the request those bytes decode to, made without reading them: the
  /// renamed archive's request is this one's, in the target layout, under the target's root key,
  /// its fields read from this archive's checked bytes. Nil when the keys are not renamed in place,
  /// or when the renamed keys do not read as this request's slots in the target layout (a slot
  /// key left as it was, which a renamed archive of an unusual request can keep).
  package func convertedInPlace(to target: Layout) -> (bytes: Data, request: URLRequestArchive)? {
    guard let fast, let (bytes, keepsRequest) = renaming(to: target), keepsRequest,
      let storage = storage.decoding(bytes)
    else { return nil }
    // `renamingKeys` leaves `$top` holding the target's root key alone.
    let rootKey = target == .dollarNumbered ? "root" : "NSKeyedArchiveRootObjectKey"
    let request = URLRequestArchive(
      layout: target, slotUIDs: slotUIDs, fast: FastFields(renaming: fast, rootKey: rootKey),
      storage: storage)
    return (bytes, request)
  }

  /// The bytes of `request`'s archive with its keys renamed from `source`'s layout to `target`'s,
  /// or nil when renaming would not give what rebuilding gives; and whether the renamed keys read,
  /// as `InPlaceRequest` reads them, as the target layout with the request's own slots.
  private static func renamingKeys(
    _ request: InPlaceRequest, from source: Layout, to target: Layout
  )
    -> (bytes: Data, keepsRequest: Bool)?
  {
    let archive = request.archive
    let table = archive.table
    guard hasArchiverEnvelope(archive) else { return nil }
    let fields = request.fields
    let fieldCount = table.count(fields)
    let (targetPrefix, targetOffset): (StaticString, Int) =
      target == .standard ? ("__nsurlrequest_proto_prop_obj_", 0) : ("$", 3)
    // The new keys' texts are written one after another into one buffer (the target's prefix and
    // a number of at most 7 digits each, and the `$N` props key), which the replacements point
    // into until the bytes are written: for the `$N` layout, small enough for the stack.
    let capacity = (fieldCount &+ 1) &* (targetPrefix.utf8CodeUnitCount &+ 7) &+ 8
    func rename(_ texts: UnsafeMutableRawBufferPointer) -> (bytes: Data, keepsRequest: Bool)? {
      var used = 0
      func text(_ prefix: StaticString, _ number: Int) -> UnsafeRawBufferPointer {
        let start = texts.baseAddress! + used
        start.copyMemory(from: prefix.utf8Start, byteCount: prefix.utf8CodeUnitCount)
        let prefixLength = prefix.utf8CodeUnitCount
        func digit(_ value: Int, at position: Int) {
          start.storeBytes(
            of: UInt8(truncatingIfNeeded: 0x30 &+ value), toByteOffset: position, as: UInt8.self)
        }
        let length: Int
        // Slot numbers are below 100 but for hostile counts: those without a loop.
        if number < 10 {
          digit(number, at: prefixLength)
          length = prefixLength &+ 1
        } else if number < 100 {
          digit(number / 10, at: prefixLength)
          digit(number % 10, at: prefixLength &+ 1)
          length = prefixLength &+ 2
        } else {
          var digits = 1
          var power = 10
          while number >= power {
            digits &+= 1
            power &*= 10
          }
          length = prefixLength &+ digits
          var rest = number
          for position in stride(from: length &- 1, through: prefixLength, by: -1) {
            digit(rest % 10, at: position)
            rest /= 10
          }
        }
        used &+= length
        return UnsafeRawBufferPointer(start: start, count: length)
      }
      // The renames `converted(to:)` makes, read from the keys' bytes.
      let count = request.slotUIDs.count
      let (prefix, offset): (StaticString, Int) =
        source == .standard ? ("__nsurlrequest_proto_prop_obj_", 0) : ("$", 3)
      let standardProps: StaticString = "__nsurlrequest_proto_props"
      // The props key in the `$N` layout: the slot after the last.
      let dollarProps = text("$", count &+ 3)
      let prefixBytes = UnsafeBufferPointer(
        start: prefix.utf8Start, count: prefix.utf8CodeUnitCount)
      var replacements: [BinaryPropertyListView.StringReplacement] = []
      replacements.reserveCapacity(fieldCount &+ 1)
      // The renamed object must still read as a request, as the rebuilt one must (else rebuilding
      // throws, and so must the conversion): a slot 0 key, or a `$3` that is a UID.
      var readsAsRequest = false
      // What the renamed keys read as: the layout (a slot 0 key is the standard one's; else a `$3`
      // UID the `$N` one's), and whether the keys of the target's prefix name the slots the
      // request has, every one of them.
      var hasProtocolSlot = false
      var threeIsUID = false
      var slotsAgree = true
      var slotsNamed = 0
      let targetPrefixBytes = UnsafeBufferPointer(
        start: targetPrefix.utf8Start, count: targetPrefix.utf8CodeUnitCount)
      for position in 0..<fieldCount {
        let key = table.key(fields, position)
        guard let old = table.asciiBytes(key) else { continue }
        var new: UnsafeRawBufferPointer?
        let value = table.value(fields, position)
        let isUID = table.isKind(value, .uid)
        // A slot key renamed names the same slot in the target's prefix.
        var namesItsSlot = false
        if let number = slotNumber(old.assumingMemoryBound(to: UInt8.self), prefix: prefixBytes),
          number &- offset >= 0, number &- offset < count
        {
          new = text(targetPrefix, number &- offset &+ targetOffset)
          namesItsSlot = true
          if isUID, table.uid(value) != 0 { slotsNamed &+= 1 }
        } else if target == .dollarNumbered, equals(old, standardProps) {
          new = dollarProps
        } else if target == .standard, equals(old, dollarProps) {
          new = UnsafeRawBufferPointer(
            start: standardProps.utf8Start, count: standardProps.utf8CodeUnitCount)
        }
        if let new { replacements.append(.init(object: key, ascii: new)) }
        let final = new ?? old
        if equals(final, "__nsurlrequest_proto_prop_obj_0") {
          readsAsRequest = true
          hasProtocolSlot = true
        } else if equals(final, "$3"), isUID {
          readsAsRequest = true
          threeIsUID = true
        }
        // Any other key that reads as a slot of the target's prefix (a key of neither layout's,
        // or the props key) must name the slot as the request has it.
        if !namesItsSlot, isUID, final.first == targetPrefixBytes[0],
          let number = slotNumber(
            final.assumingMemoryBound(to: UInt8.self), prefix: targetPrefixBytes)
        {
          let slot = number &- targetOffset
          if slot >= 0, slot < count {
            let uid = table.uid(value)
            if uid != 0 { slotsNamed &+= 1 }
            if request.slotUIDs[slot] != uid { slotsAgree = false }
          }
        }
      }
      guard readsAsRequest else { return nil }
      let readLayout: Layout? =
        hasProtocolSlot ? .standard : threeIsUID ? .dollarNumbered : nil
      let slotsNamedBefore = request.slotUIDs.reduce(0) { $1 != 0 ? $0 &+ 1 : $0 }
      let rootKey: StaticString =
        target == .dollarNumbered ? "root" : "NSKeyedArchiveRootObjectKey"
      let rootKeyObject = table.key(archive.topDictionary, 0)
      guard let rootText = table.asciiBytes(rootKeyObject) else { return nil }
      if !equals(rootText, rootKey) {
        replacements.append(
          .init(
            object: rootKeyObject,
            ascii: UnsafeRawBufferPointer(
              start: rootKey.utf8Start, count: rootKey.utf8CodeUnitCount)))
      }
      // The request's dictionary and `$top`, which hold the renamed keys, once each.
      guard
        archive.plist.renamesOnly(
          replacements, containers: [request.fields, archive.topDictionary])
      else { return nil }
      // Distinct keys name distinct slots: as many named with a UID other than 0, each as before,
      // are the same slots (UID 0 is what `findSlotUIDs` leaves a slot no key names).
      let keepsRequest = readLayout == target && slotsAgree && slotsNamed == slotsNamedBefore
      return (archive.plist.replacingStrings(replacements), keepsRequest)
    }
    // Past the 1 KiB that `withUnsafeTemporaryAllocation` keeps on the stack, a block the thread
    // reuses (`ReusableBlocks`) rather than its aligned heap path.
    if capacity <= 1024 {
      return withUnsafeTemporaryAllocation(byteCount: capacity, alignment: 1, rename)
    }
    guard let block = ReusableBlocks.take(capacity) else { return nil }
    defer { ReusableBlocks.give(block) }
    return rename(UnsafeMutableRawBufferPointer(start: block, count: capacity))
  }

  /// Whether the envelope is the one rebuilding writes: `$version` 100000, `$objects`,
  /// `$archiver` NSKeyedArchiver and `$top` with the root key alone, in that order.
  private static func hasArchiverEnvelope(_ archive: KeyedArchiveView) -> Bool {
    let table = archive.table
    let envelope = archive.plist.topObject
    let names: [StaticString] = ["$version", "$objects", "$archiver", "$top"]
    guard table.count(envelope) == names.count, table.count(archive.topDictionary) == 1 else {
      return false
    }
    for (position, name) in names.enumerated()
    where !table.isString(table.key(envelope, position), equalTo: name) {
      return false
    }
    let version = table.value(envelope, 0)
    let archiver = table.value(envelope, 2)
    return table.isKind(version, .integer) && table.integer(version).int64Value == 100_000
      && table.isKind(archiver, .string) && table.isString(archiver, equalTo: "NSKeyedArchiver")
  }

  private static func equals(_ bytes: UnsafeRawBufferPointer, _ text: StaticString) -> Bool {
    bytes.count == text.utf8CodeUnitCount
      && (bytes.isEmpty || memcmp(bytes.baseAddress!, text.utf8Start, bytes.count) == 0)
  }

  private static func equals(_ bytes: UnsafeRawBufferPointer, _ other: UnsafeRawBufferPointer)
    -> Bool
  {
    bytes.count == other.count
      && (bytes.isEmpty || memcmp(bytes.baseAddress!, other.baseAddress!, bytes.count) == 0)
  }
}

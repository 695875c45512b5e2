import CVectorLoops
import PortableFoundation

// The fast way to check a binary plist for `BinaryPropertyListView`: one pass over the offset
// table in index order instead of a walk from the top object, for the files every writer produces.
//
// The walk (`readTop`) checks only what is reachable, meets shared objects again, and must find
// cycles and count the values that shared references expand to. The pass checks every object once
// with the walk's own checks, and accepts only when, on top of that, the walk could not fail:
// - every reference from a container to a container goes to a higher index, so there is no cycle,
//   and each container is referenced at most once, so nothing expands (the walk then visits one
//   value per reference, plus the top);
// - nesting, counted along those references, stays within the depth limit.
// Anything else (an unreachable object that does not read, shared containers, references to lower
// containers) makes the pass give up, and the caller walks from the top, which gives the exact
// error or accepts. Where the pass accepts, it records what the walk records (where each string,
// data, array and dictionary's contents lie), and its `dictionariesArePlain` and `maximumUID`
// cover every object, not only reachable ones: at worst more cautious, never less.
//
// The pass that runs is in C (CVectorLoops' `binary_scan.c`: it checks an ASCII string sixteen
// bytes a step, and fingerprints only the strings that are keys), about a tenth cheaper than this
// one. This one, written first, is the reference it is compared with
// (`BinaryViewDifferential.scanDifference`, in the tests and the binary-plist fuzzer).
//
// Its tree twin: the walk from the top (`readTop`, BinaryPropertyListReader.swift). Held equal by
// `BinaryViewDifferential.difference` and `scanDifference` in
// Tests/PropertyListTests/BinaryScanTests.swift and by the fuzz harness
// Fuzz/Sources/FuzzCommon/RoundTripHarness.swift (FuzzBinaryPlist).
extension BinaryParser where Builder: ~Copyable, Builder == SpanBuilder {
  /// Checks every object in one pass; true when the walk from the top would accept the file, and
  /// then the parser's state is what the walk leaves. False leaves it as it was built.
  ///
  /// - Parameter reference: run the scan written in Swift below, which the one in C
  ///   (`cvl_bplist_scan_objects`) must agree with, instead of that one (for comparing the two).
  mutating func scanEveryObject(reference: Bool = false) -> Bool {
    let scan = reference ? try? scanObjects() : scanObjectsInC()
    if let scan {
      builder.dictionariesArePlain = scan.plain
      builder.maximumUID = scan.maximumUID
      return true
    }
    expandedSize.update(repeating: 0, count: trailer.objectCount)
    return false
  }

  private func scanObjectsInC() -> (plain: Bool, maximumUID: UInt64?)? {
    // `Int` is 64 bits wherever this builds, and a span is two of them (start, count).
    var scan = cvl_bplist_scan(
      bytes: bytes.baseAddress!.assumingMemoryBound(to: UInt8.self),
      object_area_end: Int64(area.objectAreaEnd),
      offsets: UnsafeRawPointer(offsets).assumingMemoryBound(to: Int64.self),
      object_count: Int64(trailer.objectCount), reference_size: Int64(trailer.objectRefSize),
      maximum_length: Int64(limits.maximumValueLength), maximum_depth: Int64(limits.maximumDepth),
      maximum_visits: Int64(limits.maximumVisitedElements),
      plain_entry_limit: Int64(PropertyListDictionary.indexThreshold),
      sizes: UnsafeMutableRawPointer(expandedSize).assumingMemoryBound(to: Int64.self),
      spans: UnsafeMutableRawPointer(cache).assumingMemoryBound(to: Int64.self),
      scratch: scratch)
    var result = cvl_bplist_scan_result()
    guard cvl_bplist_scan_objects(&scan, &result) == 1 else { return nil }
    return (result.plain != 0, result.has_uid != 0 ? result.maximum_uid : nil)
  }

  private struct Gaveup: Error {}

  // While the pass runs, `expandedSize` holds, for a container not yet reached that a container
  // refers to, minus its depth; once an object is reached, 1 when its contents were recorded in
  // `cache` (what the walk's positive expanded sizes mean to the view), else 0.
  private func scanObjects() throws -> (plain: Bool, maximumUID: UInt64?) {
    let objectCount = trailer.objectCount
    // Per object: for an ASCII string, its key fingerprint (odd); for a UTF-16 string, 2; for a
    // dictionary, a link to the dictionary read before it, whose keys are checked once every
    // string has its fingerprint (a multiple of 4: (index + 1) * 4, or 0 for the first); 0 for
    // anything else. So a key's word alone tells whether it is a string, and of which kind.
    let prints = scratch
    prints.initialize(repeating: 0, count: objectCount)
    // What the loop reads, in locals: as far as the compiler knows, the pointers it stores through
    // could alias the parser's own fields, which it would otherwise load again after every store.
    let base = bytes.baseAddress!
    let end = area.objectAreaEnd
    let maximumLength = limits.maximumValueLength
    let maximumDepth = limits.maximumDepth
    let maximumVisits = limits.maximumVisitedElements
    let offsets = self.offsets
    let sizes = expandedSize
    let cache = self.cache
    let referenceSize = trailer.objectRefSize
    var lastDictionary = -1
    var plain = true
    var maximumUID: UInt64?
    // One visit for the top, one per reference: the walk's count when nothing is shared.
    var visits = 1

    // The count after a marker and where the contents start, as `readCount` reads them; the short
    // forms, which nearly every object has, without a call. The start is never past `end`.
    func contentCount(_ offset: Int, _ marker: UInt8) throws -> (count: Int, start: Int) {
      let nibble = Int(marker & 0x0F)
      if nibble != 0x0F { return (nibble, offset &+ 1) }
      // A one-byte length integer, as every key of 15 to 255 bytes has.
      if offset &+ 2 < end, base.load(fromByteOffset: offset &+ 1, as: UInt8.self) == 0x10 {
        return (Int(base.load(fromByteOffset: offset &+ 2, as: UInt8.self)), offset &+ 3)
      }
      return try area.readCount(at: offset, marker: marker)
    }
    // `BinaryObjectArea.need`, as a test: `start` is never past `end`.
    func fits(_ start: Int, _ count: Int) -> Bool { count <= end &- start }
    func record(_ index: Int, _ start: Int, _ count: Int) {
      // Spans are trivial values: initializing over a stale one needs no deinitialization.
      (cache + index).initialize(to: ByteSpan(start: start, count: count))
      sizes[index] = 1
    }
    // A reference from container `index` at `depth`; marks a container it names.
    func checkReference(_ target: Int, from index: Int, depth: Int) throws {
      // Unsigned: an 8-byte reference may read as a negative Int.
      guard UInt(bitPattern: target) < UInt(objectCount) else { throw Gaveup() }
      let kind = base.load(fromByteOffset: offsets[target], as: UInt8.self) >> 4
      if kind == 0xA || kind == 0xD {
        // Upward and unshared: no cycle, and no expansion. (A container at or below this index
        // has been recorded already, so the second test alone implies the first.)
        guard target > index, sizes[target] == 0 else { throw Gaveup() }
        sizes[target] = -(depth &+ 1)
      }
    }

    for index in 0..<objectCount {
      let offset = offsets[index]
      let marker = base.load(fromByteOffset: offset, as: UInt8.self)
      switch marker >> 4 {
      case 0x0:
        guard marker == 0x08 || marker == 0x09 else { throw Gaveup() }
      case 0x1:
        // 1, 2, 4 or 8 bytes need only be there; 16 bytes must also hold a 64-bit value.
        if marker <= 0x13 {
          guard fits(offset &+ 1, 1 << Int(marker & 0x0F)) else { throw Gaveup() }
        } else {
          _ = try area.readInteger(at: offset, marker: marker)
        }
      case 0x2:
        switch marker & 0x0F {
        case 2: guard fits(offset &+ 1, 4) else { throw Gaveup() }
        case 3: guard fits(offset &+ 1, 8) else { throw Gaveup() }
        default: throw Gaveup()
        }
      case 0x3:
        guard marker == 0x33, fits(offset &+ 1, 8) else { throw Gaveup() }
      case 0x4:
        let (count, start) = try contentCount(offset, marker)
        guard count <= maximumLength, fits(start, count) else { throw Gaveup() }
        record(index, start, count)
      case 0x5:
        let (count, start) = try contentCount(offset, marker)
        guard count <= maximumLength, fits(start, count) else { throw Gaveup() }
        let string = UnsafeRawBufferPointer(start: base + start, count: count)
        guard Self.isASCII(string) else { throw Gaveup() }
        prints[index] = keyFingerprint(string)
        record(index, start, count)
      case 0x6:
        let (count, start) = try contentCount(offset, marker)
        let (byteCount, overflow) = count.multipliedReportingOverflow(by: 2)
        guard !overflow, byteCount <= maximumLength, fits(start, byteCount) else {
          throw Gaveup()
        }
        try area.checkUTF16(start: start, count: count)
        prints[index] = 2
        record(index, start, count)
      case 0x8:
        // Longer UIDs are legal but never written; the walk checks them.
        let size = Int(marker & 0x0F) &+ 1
        guard size <= 8, fits(offset &+ 1, size) else { throw Gaveup() }
        let uid = Self.readSizedUInt(bytes, offset &+ 1, size)
        guard uid <= UInt64(UInt32.max) else { throw Gaveup() }
        maximumUID = max(maximumUID ?? 0, uid)
      case 0xA, 0xD:
        let isDictionary = marker >> 4 == 0xD
        let (count, start) = try contentCount(offset, marker)
        let (references, overflow) = count.multipliedReportingOverflow(by: isDictionary ? 2 : 1)
        let (byteCount, overflow2) = references.multipliedReportingOverflow(by: referenceSize)
        guard !overflow, !overflow2, fits(start, byteCount) else { throw Gaveup() }
        let depth = sizes[index] < 0 ? -sizes[index] : 1
        guard depth <= maximumDepth else { throw Gaveup() }
        visits &+= references
        guard visits <= maximumVisits else { throw Gaveup() }
        record(index, start, count)
        // One-byte references, what files of up to 256 objects use, in a loop of their own.
        if referenceSize == 1 {
          for position in start..<(start &+ references) {
            try checkReference(
              Int(base.load(fromByteOffset: position, as: UInt8.self)), from: index, depth: depth)
          }
        } else {
          var position = start
          for _ in 0..<references {
            try checkReference(
              Int(truncatingIfNeeded: Self.readSizedUInt(bytes, position, referenceSize)),
              from: index, depth: depth)
            position &+= referenceSize
          }
        }
        if isDictionary {
          if count > PropertyListDictionary.indexThreshold { plain = false }
          prints[index] = UInt64(lastDictionary &+ 1) << 2
          lastDictionary = index
        }
      default:
        throw Gaveup()
      }
    }
    var dictionary = lastDictionary
    while dictionary >= 0 {
      let span = cache[dictionary]
      try checkKeys(count: span.count, start: span.start, plain: &plain, prints: prints)
      dictionary = Int(truncatingIfNeeded: prints[dictionary] >> 2) - 1
    }
    return (plain, maximumUID)
  }

  /// Checks that a dictionary's keys are strings, and clears `plain` when one is not ASCII or two
  /// are equal. Every object has been scanned: `prints` says what each key is.
  private func checkKeys(
    count: Int, start: Int, plain: inout Bool, prints: UnsafeMutablePointer<UInt64>
  ) throws {
    let referenceSize = trailer.objectRefSize
    // One bit per fingerprint's top 8 bits: a key whose bit is clear differs from every earlier
    // key, so keys are compared only on the rare shared bit (archives' largest dictionaries have
    // some 30 keys).
    var seen: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    // The pass has checked every reference, keys included: each names an object.
    for entry in 0..<count {
      let key = Int(
        truncatingIfNeeded: Self.readSizedUInt(
          bytes, start &+ entry &* referenceSize, referenceSize))
      let print = prints[key]
      guard print & 1 == 1 else {
        // A UTF-16 string makes the dictionary not plain; anything else is not a key.
        guard print == 2 else { throw Gaveup() }
        plain = false
        continue
      }
      guard plain else { continue }
      // The top bits: the multiplications that make the fingerprint mix upwards.
      let bit = UInt64(1) << (print >> 56 & 63)
      let word = Int(print >> 62)
      let wasSeen = withUnsafeMutableBytes(of: &seen) { words in
        let seenWords = words.assumingMemoryBound(to: UInt64.self)
        defer { seenWords[word] |= bit }
        return seenWords[word] & bit != 0
      }
      guard wasSeen else { continue }
      // Earlier keys' fingerprints are known: bytes are compared only when two are equal.
      let keySpan = cache[key]
      for earlierEntry in 0..<entry {
        let earlierKey = Int(
          truncatingIfNeeded: Self.readSizedUInt(
            bytes, start &+ earlierEntry &* referenceSize, referenceSize))
        guard prints[earlierKey] == print else { continue }
        let earlierSpan = cache[earlierKey]
        if earlierSpan.count == keySpan.count,
          memcmp(
            bytes.baseAddress! + earlierSpan.start, bytes.baseAddress! + keySpan.start,
            keySpan.count) == 0
        {
          plain = false
          break
        }
      }
    }
  }
}

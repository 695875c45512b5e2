import PortableFoundation

// Strings of a binary plist rewritten in its bytes, for a request archive's layout conversion
// (URLRequestArchiveRenaming.swift in KeyedArchive). Its tree twin: rebuilding the plist and
// writing it (BinaryPropertyListWriter.swift), which the caller falls back to when `renamesOnly`
// is false. Held equal, through the renaming, by the tests of "Request layout conversion by
// renaming in place" (Tests/KeyedArchiveTests/RequestArchiveTests.swift) and by the fuzz harness
// Fuzz/Sources/FuzzKeyedArchive/KeyedArchiveHarness.swift (check 4).

extension BinaryPropertyListView {
  /// One string object to write with other text.
  package struct StringReplacement {
    /// The object's index.
    package var object: Int
    /// Its new text: ASCII only, as the writer writes it with a 1-byte-per-character marker. The
    /// caller's bytes, which must outlive the replacement.
    package var ascii: UnsafeRawBufferPointer

    /// Object `object`, written as `ascii`.
    package init(object: Int, ascii: UnsafeRawBufferPointer) {
      self.object = object
      self.ascii = ascii
    }
  }

  /// Whether `replacingStrings(replacements)` renames those strings and changes nothing else, so
  /// that it writes what the writer writes for the renamed plist: the objects lie as the writer
  /// lays them (the first right after the header, each ending where the next starts, the last
  /// where the offset table starts, every one of them checked, so that none overlaps another and
  /// rewriting one changes no other's bytes), each renamed object is a string referenced once in
  /// the whole plist, and no new text is that of an ASCII string kept (the writer shares a key's
  /// string among every dictionary using it, and would share two keys made equal). Strings that
  /// are not keys are held to that too: checking each string once costs less than checking at
  /// each reference whether it is a key's, and a value with a new key's text is rare (it is then
  /// left to rebuilding, which writes the same bytes renaming would).
  ///
  /// `containers` are dictionaries that hold renamed keys and must be referenced once as well: a
  /// dictionary that a second place holds as a plain value would have its keys renamed there too,
  /// where rebuilding renames them only where it means them (a fuzz find: a request whose field
  /// held `$top` itself).
  ///
  /// One pass over the objects, their bytes read directly: the check costs about what a copy of
  /// the plist does.
  package func renamesOnly(_ replacements: [StringReplacement], containers: [Int] = []) -> Bool {
    guard !replacements.isEmpty else { return true }
    let objectCount = self.objectCount
    let words = (objectCount &+ 63) / 64
    // Two bits an object: renamed, and referenced once already.
    return withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 2 &* words) { bits in
      bits.initialize(repeating: 0)
      let renamed = bits.baseAddress!
      let seen = renamed + words
      // The new texts' signatures, so that most strings are passed over unread.
      var signatures: UInt64 = 0
      let base = rawBytes.baseAddress!
      let offsets = objects.objectOffsets
      for replacement in replacements {
        let object = replacement.object
        guard object >= 0, object < objectCount, object != topObjectIndex,
          renamed[object >> 6] & (1 << UInt64(object & 63)) == 0
        else { return false }
        let kind = base.load(fromByteOffset: offsets[object], as: UInt8.self) >> 4
        guard kind == 0x5 || kind == 0x6 else { return false }
        renamed[object >> 6] |= 1 << UInt64(object & 63)
        let text = replacement.ascii
        signatures |= Self.signature(text.count, text.last ?? 0)
      }
      // Marked as the renamed strings are, for the walk to count their references; only strings
      // are ever compared with the new texts.
      for container in containers {
        guard container >= 0, container < objectCount, container != topObjectIndex,
          base.load(fromByteOffset: offsets[container], as: UInt8.self) >> 4 == 0xD
        else { return false }
        renamed[container >> 6] |= 1 << UInt64(container & 63)
      }
      let walked: Bool
      switch referenceSize {
      case 1:
        walked = walkForRenaming(replacements, renamed, seen, signatures, width: 1) {
          Int(base.load(fromByteOffset: $0, as: UInt8.self))
        }
      case 2:
        walked = walkForRenaming(replacements, renamed, seen, signatures, width: 2) {
          Int(UInt16(bigEndian: base.loadUnaligned(fromByteOffset: $0, as: UInt16.self)))
        }
      default:
        let bytes = rawBytes
        let width = referenceSize
        walked = walkForRenaming(replacements, renamed, seen, signatures, width: width) {
          Int(truncatingIfNeeded: BinaryBytes.readSizedUInt(bytes, $0, width))
        }
      }
      guard walked else { return false }
      // Every renamed object referenced (once: a second reference failed the walk).
      for word in 0..<words where renamed[word] & ~seen[word] != 0 { return false }
      return true
    }
  }

  /// The walk of `renamesOnly` over every object, references read by `reference`: false when an
  /// object lies elsewhere than the writer puts it, a renamed one is referenced twice, or an ASCII
  /// string kept has a new text's text.
  @inline(__always)
  private func walkForRenaming(
    _ replacements: [StringReplacement], _ renamed: UnsafeMutablePointer<UInt64>,
    _ seen: UnsafeMutablePointer<UInt64>, _ signatures: UInt64, width: Int,
    _ reference: (Int) -> Int
  ) -> Bool {
    let base = rawBytes.baseAddress!
    let offsets = objects.objectOffsets
    let spans = objects.spans
    let recorded = objects.recorded
    var position = 8
    for object in 0..<objectCount {
      let offset = offsets[object]
      guard offset == position else { return false }
      let marker = base.load(fromByteOffset: offset, as: UInt8.self)
      let kind = marker >> 4
      switch kind {
      case 0x0: position = offset &+ 1
      case 0x1, 0x2: position = offset &+ 1 &+ (1 << Int(marker & 0x0F))
      case 0x3: position = offset &+ 9
      case 0x8: position = offset &+ 2 &+ Int(marker & 0x0F)
      default:
        // Strings, data and containers: where the check recorded their contents to end.
        guard recorded[object] > 0 else { return false }
        let span = spans[object]
        guard kind == 0xA || kind == 0xD else {
          position = span.start &+ (kind == 0x6 ? span.count &* 2 : span.count)
          // A string kept: no new text may equal it.
          guard kind == 0x5 else { continue }
          let last =
            span.count == 0
            ? 0 : base.load(fromByteOffset: span.start &+ span.count &- 1, as: UInt8.self)
          if signatures & Self.signature(span.count, last) != 0,
            renamed[object >> 6] & (1 << UInt64(object & 63)) == 0
          {
            for replacement in replacements
            where replacement.ascii.count == span.count
              && (span.count == 0
                || memcmp(replacement.ascii.baseAddress!, base + span.start, span.count) == 0)
            {
              return false
            }
          }
          continue
        }
        let references = kind == 0xD ? span.count &* 2 : span.count
        position = span.start &+ references &* width
        var at = span.start
        for _ in 0..<references {
          let target = reference(at)
          at &+= width
          let word = target >> 6
          let bit: UInt64 = 1 << UInt64(target & 63)
          if renamed[word] & bit != 0 {
            if seen[word] & bit != 0 { return false }
            seen[word] |= bit
          }
        }
      }
    }
    return position == offsetTableOffset
  }

  // One bit of 64 for a text of `count` bytes ending in `last`: new keys are mostly a prefix and a
  // number, which differ in their length and last digit.
  @inline(__always)
  private static func signature(_ count: Int, _ last: UInt8) -> UInt64 {
    1 << UInt64(truncatingIfNeeded: (count &* 7 &+ Int(last)) & 63)
  }

  /// The plist's bytes with the string objects of `replacements` written with their new text, and
  /// every other object's bytes as they are: a rename that moves no object, costing a copy of the
  /// bytes rather than a decoding and an encoding.
  ///
  /// Only for a plist whose objects lie as ``BinaryPropertyListWriter`` writes them
  /// (`objectsAreContiguous`), which callers check: the result is then the writer's encoding of the
  /// renamed plist, as long as renaming makes no two objects the writer would share equal, which
  /// callers check too. The offset table is written anew, with the fewest bytes per offset that the
  /// writer uses.
  ///
  /// - Precondition: each object of `replacements` is a distinct index below `objectCount`.
  package func replacingStrings(_ replacements: [StringReplacement]) -> Data {
    let objectCount = self.objectCount
    let base = rawBytes.baseAddress!
    let tableOffset = offsetTableOffset
    // In index order as a rule (a dictionary's keys are written in order): sorted only if not.
    let inOrder = zip(replacements, replacements.dropFirst()).allSatisfy { $0.object < $1.object }
    let ordered = inOrder ? replacements : replacements.sorted { $0.object < $1.object }
    var added = 0
    for replacement in ordered { added &+= replacement.ascii.count &+ 10 }
    // Room for everything: the objects, at most 8 bytes per offset, and the trailer.
    var out = OutputBytes(capacity: tableOffset &+ added &+ objectCount &* 8 &+ 32)
    out.reserve(tableOffset &+ added &+ objectCount &* 8 &+ 32)
    let table = objects
    // Each run of objects from one renamed object to the next moves by one amount: the new
    // offsets are written after the objects, so each run's shift is kept until then.
    var shifts: [Int] = []
    shifts.reserveCapacity(ordered.count)
    var copied = 0
    for replacement in ordered {
      let start = table.offset(replacement.object)
      let end =
        replacement.object &+ 1 < objectCount
        ? table.offset(replacement.object &+ 1) : tableOffset
      out.put(base + copied, start &- copied)
      let length = replacement.ascii.count
      if length < 15 {
        out.put(0x50 | UInt8(length))
      } else {
        // The writer's count: an integer object of the fewest bytes that hold it.
        out.put(0x5F)
        let size = binaryByteCount(UInt64(length))
        out.put(0x10 | UInt8(size.trailingZeroBitCount))
        for index in stride(from: size &- 1, through: 0, by: -1) {
          out.put(UInt8(truncatingIfNeeded: length >> (index &* 8)))
        }
      }
      out.put(replacement.ascii)
      copied = end
      shifts.append(out.count &- end)
    }
    out.put(base + copied, tableOffset &- copied)
    let newTableOffset = out.count
    let offsetSize = binaryByteCount(UInt64(newTableOffset))
    // Each run of objects up to the next renamed one moves by one amount: the first object after
    // a renamed one takes that rename's shift.
    var first = 0
    var shift = 0
    for run in 0...ordered.count {
      let end = run < ordered.count ? ordered[run].object &+ 1 : objectCount
      switch offsetSize {
      case 1:
        for object in first..<end {
          out.put(UInt8(truncatingIfNeeded: table.offset(object) &+ shift))
        }
      case 2:
        for object in first..<end {
          out.put(bigEndian: UInt16(truncatingIfNeeded: table.offset(object) &+ shift))
        }
      case 4:
        for object in first..<end {
          out.put(bigEndian: UInt32(truncatingIfNeeded: table.offset(object) &+ shift))
        }
      default:
        for object in first..<end {
          out.put(bigEndian: UInt64(truncatingIfNeeded: table.offset(object) &+ shift))
        }
      }
      if run < ordered.count { shift = shifts[run] }
      first = end
    }
    // The writer's trailer: six zero bytes (unused, sort version), the two sizes, then the
    // object count, the top object and the offset table's offset, eight bytes each.
    for _ in 0..<6 { out.put(0) }
    out.put(UInt8(offsetSize))
    out.put(UInt8(referenceSize))
    out.put(bigEndian: UInt64(objectCount))
    out.put(bigEndian: UInt64(topObjectIndex))
    out.put(bigEndian: UInt64(newTableOffset))
    return out.finish()
  }
}

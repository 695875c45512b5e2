import Foundation

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

  /// Whether the objects lie as the writer lays them: the first right after the header, each
  /// ending where the next starts, the last where the offset table starts, and every one of them
  /// checked (none overlaps another, so that rewriting one changes no other's bytes).
  package var objectsAreContiguous: Bool {
    let table = objects
    let objectCount = self.objectCount
    let bytes = rawBytes
    var position = 8
    for object in 0..<objectCount {
      let offset = table.offset(object)
      guard offset == position else { return false }
      let marker = bytes[offset]
      let end: Int
      switch marker >> 4 {
      case 0x0: end = offset &+ 1
      case 0x1, 0x2: end = offset &+ 1 &+ (1 << Int(marker & 0x0F))
      case 0x3: end = offset &+ 9
      case 0x8: end = offset &+ 2 &+ Int(marker & 0x0F)
      default:
        // Strings, data and containers: where the check recorded their contents to end.
        guard table.recorded[object] > 0 else { return false }
        let (count, start) = table.contents(object)
        let unit: Int =
          switch marker >> 4 {
          case 0x6: 2
          case 0xA: referenceSize
          case 0xD: 2 &* referenceSize
          default: 1
          }
        end = start &+ count &* unit
      }
      position = end
    }
    return position == offsetTableOffset
  }

  /// The plist's bytes with the string objects of `replacements` written with their new text, and
  /// every other object's bytes as they are: a rename that moves no object, costing a copy of the
  /// bytes rather than a decoding and an encoding.
  ///
  /// Only for a plist whose objects lie as `BinaryPropertyListWriter` writes them
  /// (`objectsAreContiguous`), which callers check: the result is then the writer's encoding of the renamed plist, as long as renaming
  /// makes no two objects the writer would share equal, which callers check too. The offset table
  /// is written anew, with the fewest bytes per offset that the writer uses.
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
    var next = 0
    var shift = 0
    for object in 0..<objectCount {
      // The first object after a renamed one takes that rename's shift.
      if next < ordered.count, object > ordered[next].object {
        shift = shifts[next]
        next &+= 1
      }
      let moved = UInt64(truncatingIfNeeded: table.offset(object) &+ shift)
      switch offsetSize {
      case 1: out.put(UInt8(truncatingIfNeeded: moved))
      case 2: out.put(bigEndian: UInt16(truncatingIfNeeded: moved))
      case 4: out.put(bigEndian: UInt32(truncatingIfNeeded: moved))
      default: out.put(bigEndian: moved)
      }
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

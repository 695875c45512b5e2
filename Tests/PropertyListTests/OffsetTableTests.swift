import CVectorLoops
import Foundation
import PropertyList
import Testing

/// The offset table read in vectors (`cvl_read_offsets`, eight entries a step) against the rule it
/// states, and the reader's error for an entry outside the object area, wherever in a step it is.
@Suite("Offset tables")
struct OffsetTableTests {
  // The rule, one entry at a time: each entry stored, and whether any minus 8 reaches the limit.
  static func expected(_ table: [UInt8], width: Int, limit: UInt64) -> (
    entries: [Int64], outside: Bool
  ) {
    var entries: [Int64] = []
    for index in 0..<table.count / width {
      var entry: Int64 = 0
      for byte in table[(index * width)..<(index * width + width)] {
        entry = entry << 8 | Int64(byte)
      }
      entries.append(entry)
    }
    return (entries, entries.contains { UInt64($0) &- 8 >= limit })
  }

  // Limits around the 16-bit cap the vector loop compares under (0xFFF8), and small ones.
  static let limits: [UInt64] = [0, 1, 20, 255, 0x1000, 0xFFF7, 0xFFF8, 0xFFF9, 0x1_0000, 1 << 40]

  @Test(
    "Every entry is stored and every entry outside is found, at every position of a step",
    arguments: [1, 2], limits)
  func everyEntry(width: Int, limit: UInt64) {
    // Entry values at the edges: below 8, 8, the limit's edges, the largest of the width.
    var values: [UInt64] = [0, 7, 8, 9, limit &+ 7, limit &+ 8, limit &+ 9, 0xFF, 0xFFFF]
    values = values.filter { $0 < 1 << (8 * width) }
    // 19 entries: two steps of eight and a tail of three. The filler (8) is inside every limit
    // above 0.
    for value in values {
      for position in 0..<19 {
        var entries = [UInt64](repeating: 8, count: 19)
        entries[position] = value
        let table = entries.flatMap { entry in
          width == 1 ? [UInt8(entry)] : [UInt8(entry >> 8), UInt8(entry & 0xFF)]
        }
        var out = [Int64](repeating: -1, count: 19)
        let outside = table.withUnsafeBufferPointer { bytes in
          cvl_read_offsets(bytes.baseAddress, 19, width, limit, &out)
        }
        let want = Self.expected(table, width: width, limit: limit)
        #expect(out == want.entries, "width \(width), limit \(limit), \(value) at \(position)")
        #expect(
          outside == (want.outside ? 1 : 0),
          "width \(width), limit \(limit), \(value) at \(position)")
      }
    }
  }

  @Test("Other widths are left to the caller, and nothing is written")
  func otherWidths() {
    let table = [UInt8](repeating: 0, count: 32)
    var out = [Int64](repeating: -1, count: 8)
    for width in [0, 3, 4, 8] {
      #expect(
        table.withUnsafeBufferPointer { cvl_read_offsets($0.baseAddress, 8, width, 100, &out) }
          == -1)
    }
    #expect(out == [Int64](repeating: -1, count: 8))
  }

  // A plist of 40 strings in an array: 41 objects, a file over 256 bytes, so two-byte offsets.
  static let plist: Data = {
    let value = PropertyListValue.array((0..<40).map { .string("string number \($0)") })
    return try! BinaryPropertyListWriter().write(value)
  }()

  @Test(
    "An entry outside the object area is refused with its value and its place in the table",
    arguments: [0, 5, 7, 8, 23, 40], [UInt16(3), 0xFFFF])
  func entryOutside(index: Int, entry: UInt16) throws {
    var bytes = [UInt8](Self.plist)
    let trailer = bytes.count - 32
    #expect(bytes[trailer + 6] == 2)
    let tableOffset = bytes[(trailer + 24)...].reduce(0) { $0 << 8 | Int($1) }
    bytes[tableOffset + index * 2] = UInt8(entry >> 8)
    bytes[tableOffset + index * 2 + 1] = UInt8(entry & 0xFF)
    #expect {
      _ = try BinaryPropertyListReader().read(Data(bytes))
    } throws: { error in
      (error as? PropertyListError)?.description
        == "@\(tableOffset + index * 2): offset-table entry \(entry) is outside the object area 8..<\(tableOffset)"
    }
  }
}

import PortableFoundation

/// Keys that recur in the property lists this toolkit reads (URLSession resume data, and the
/// structure of keyed archives), made once from literals: a key read with the same bytes is the
/// literal, which costs no allocation to make, nothing to release, and no UTF-8 validation.
enum KnownKeys {
  // In memory of its own for the life of the process, so that a lookup retains nothing. Written
  // only while the static is initialized, before any thread can see it.
  private struct Table: @unchecked Sendable {
    let count: Int
    let strings: UnsafeMutablePointer<String>
    /// Every key's UTF-8, one after the other; key `n` runs from `starts[n]` to `starts[n + 1]`.
    let bytes: UnsafeMutablePointer<UInt8>
    let starts: UnsafeMutablePointer<Int>
    let prints: UnsafeMutablePointer<UInt64>
    /// Open addressing by the fingerprint's top bits: a key's index plus one, or 0.
    let slots: UnsafeMutablePointer<UInt8>
  }

  private static let slotBits = 6

  private static let table: Table = {
    let strings = [
      "NSURLSessionDownloadURL", "NSURLSessionResumeBytesReceived",
      "NSURLSessionResumeCurrentRequest", "NSURLSessionResumeOriginalRequest",
      "NSURLSessionResumeEntityTag", "NSURLSessionResumeServerDownloadDate",
      "NSURLSessionResumeInfoTempFileName", "NSURLSessionResumeInfoLocalPath",
      "NSURLSessionResumeInfoVersion", "NSURLSessionResumeByteRange",
      "NSURLSessionResumeResponse", "$archiver", "$objects", "$top", "$version", "$class",
      "$classname", "$classes", "NS.keys", "NS.objects", "NS.string", "NS.bytes", "NS.data",
      "NS.base", "NS.relative", "NS.time", "CF$UID", "root",
    ]
    let utf8 = strings.flatMap { Array($0.utf8) }
    let table = Table(
      count: strings.count, strings: .allocate(capacity: strings.count),
      bytes: .allocate(capacity: utf8.count), starts: .allocate(capacity: strings.count + 1),
      prints: .allocate(capacity: strings.count), slots: .allocate(capacity: 1 << slotBits))
    table.strings.initialize(from: strings, count: strings.count)
    table.bytes.initialize(from: utf8, count: utf8.count)
    table.slots.initialize(repeating: 0, count: 1 << slotBits)
    var start = 0
    for (index, string) in strings.enumerated() {
      table.starts[index] = start
      let count = string.utf8.count
      let print = keyFingerprint(UnsafeRawBufferPointer(start: table.bytes + start, count: count))
      table.prints[index] = print
      var slot = Int(truncatingIfNeeded: print >> (64 - slotBits))
      while table.slots[slot] != 0 { slot = (slot + 1) & ((1 << slotBits) - 1) }
      table.slots[slot] = UInt8(index + 1)
      start += count
    }
    table.starts[strings.count] = start
    return table
  }()

  /// The known key with exactly these bytes (whose fingerprint is `print`), if there is one.
  static func find(_ bytes: UnsafeRawBufferPointer, print: UInt64) -> String? {
    let table = table
    var slot = Int(truncatingIfNeeded: print >> (64 - slotBits))
    while true {
      let entry = Int(table.slots[slot])
      if entry == 0 { return nil }
      let index = entry &- 1
      if table.prints[index] == print {
        let start = table.starts[index]
        let count = table.starts[index &+ 1] &- start
        if count == bytes.count, memcmp(table.bytes + start, bytes.baseAddress!, count) == 0 {
          return table.strings[index]
        }
      }
      slot = (slot &+ 1) & ((1 << slotBits) &- 1)
    }
  }
}

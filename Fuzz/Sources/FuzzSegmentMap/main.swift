import ResumeData

/// libFuzzer's entry point: reads the input as a segment map (`ResumeDataKitSegments`, the text a
/// segmented download records) and, when it reads, checks what every reader of a map relies on:
/// the ranges ascend, stay apart and lie inside the total; the missing ranges and the ranges on
/// disk cover the file exactly once; the text it writes reads back as the same map; and a map cut
/// short keeps only what fits.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
  let text = String(decoding: UnsafeRawBufferPointer(start: start, count: count), as: UTF8.self)
  guard let map = try? SegmentMap(parsing: text) else { return 0 }
  var next: Int64 = 0
  for range in map.onDisk {
    guard range.lowerBound > next || (next == 0 && range.lowerBound == 0), !range.isEmpty,
      range.upperBound <= map.total
    else { fatalError("ranges out of order or outside the total: \(text)") }
    next = range.upperBound
  }
  let covered =
    map.onDisk.reduce(Int64(0)) { $0 + Int64($1.count) }
    + map.missing.reduce(Int64(0)) { $0 + Int64($1.count) }
  guard covered == map.total, covered >= map.bytesOnDisk, map.contiguousPrefix <= map.total else {
    fatalError("the ranges do not cover the file once: \(text)")
  }
  guard let again = try? SegmentMap(parsing: map.description), again == map else {
    fatalError("the written map does not read back: \(text) -> \(map.description)")
  }
  let half = map.truncated(to: map.total / 2)
  guard half.total == map.total, half.onDisk.allSatisfy({ $0.upperBound <= map.total / 2 }) else {
    fatalError("a truncated map keeps more than fits: \(text)")
  }
  return 0
}

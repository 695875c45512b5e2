import PortableFoundation

/// Which bytes of a segmented download's partial file are on disk, as resume data records them.
///
/// A segmented download writes each segment at its offset into one partial file allocated to the
/// complete length, so the file's size says nothing about what it holds. The map does: the ranges
/// that were written and flushed before it was persisted, and the complete length. It travels in
/// resume data under `ResumeDataKitSegments` as text in the spirit of HTTP's ranges:
/// `bytes=0-1048575,2097152-3145727/67108864` (inclusive ranges, ascending, apart; `bytes=/N` when
/// nothing is on disk). Apple's systems ignore the key: for them `NSURLSessionResumeBytesReceived`
/// is the contiguous prefix from byte 0. The downloader writes and reads it; diagnosis and repair
/// use it to judge the partial file, whose size is the complete length.
public struct SegmentMap: Sendable, Hashable, CustomStringConvertible {
  /// The complete length of the file.
  public let total: Int64
  /// The ranges on disk: ascending, non-empty, apart (never touching), inside `0..<total`.
  public private(set) var onDisk: [Range<Int64>]

  /// The most ranges a map read from resume data may hold: a download of 16 connections makes a
  /// handful; a blob that lists millions is not one of ours.
  public static let maximumRanges = 4096

  /// A map of `total` bytes of which `onDisk` are on disk (in any order; overlapping and touching
  /// ranges are merged, empty ones dropped, and everything is clipped to `0..<total`).
  public init(total: Int64, onDisk ranges: [Range<Int64>]) {
    self.total = max(total, 0)
    var merged = [Range<Int64>]()
    for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
      let clipped = max(range.lowerBound, 0)..<min(range.upperBound, self.total)
      guard !clipped.isEmpty else { continue }
      if let last = merged.last, clipped.lowerBound <= last.upperBound {
        merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, clipped.upperBound)
      } else {
        merged.append(clipped)
      }
    }
    onDisk = merged
  }

  /// Reads the text form (`bytes=S-E,…/TOTAL`).
  ///
  /// - Throws: ``ResumeDataError`` with `.invalidValue` at `ResumeDataKitSegments`, saying at
  ///   which character the text departs from the form: ranges must ascend, stay apart and end
  ///   before the total, and the numbers must fit in 63 bits.
  public init(parsing text: String) throws(ResumeDataError) {
    let bytes = Array(text.utf8)
    var index = 0
    func fail(_ what: String) -> ResumeDataError {
      ResumeDataError(
        .invalidValue,
        "the segment map \(String(reflecting: text)) is malformed at character \(index + 1): \(what)",
        at: ResumeDataKey.segments)
    }
    func number() throws(ResumeDataError) -> Int64 {
      let start = index
      var value: Int64 = 0
      while index < bytes.count, (0x30...0x39).contains(bytes[index]) {
        let (times, overflow) = value.multipliedReportingOverflow(by: 10)
        let (sum, overflow2) = times.addingReportingOverflow(Int64(bytes[index] - 0x30))
        guard !overflow, !overflow2 else { throw fail("the number does not fit in 63 bits") }
        value = sum
        index += 1
      }
      guard index > start else { throw fail("a number was expected") }
      return value
    }
    guard bytes.starts(with: Array("bytes=".utf8)) else { throw fail("it must start with bytes=") }
    index = 6
    var ranges = [Range<Int64>]()
    while index < bytes.count, bytes[index] != UInt8(ascii: "/") {
      if !ranges.isEmpty {
        guard bytes[index] == UInt8(ascii: ",") else { throw fail("',' or '/' was expected") }
        index += 1
      }
      let first = try number()
      guard index < bytes.count, bytes[index] == UInt8(ascii: "-") else {
        throw fail("'-' was expected")
      }
      index += 1
      let last = try number()
      guard last >= first, last < Int64.max else { throw fail("the range ends before it starts") }
      if let previous = ranges.last, first <= previous.upperBound {
        throw fail("the ranges must ascend and stay apart")
      }
      guard ranges.count < Self.maximumRanges else {
        throw fail("more than \(Self.maximumRanges) ranges")
      }
      ranges.append(first..<(last + 1))
    }
    guard index < bytes.count else { throw fail("'/' and the total length were expected") }
    index += 1
    let total = try number()
    guard index == bytes.count else { throw fail("nothing may follow the total length") }
    if let last = ranges.last, last.upperBound > total {
      index = 6
      throw fail("a range ends past the total length \(total)")
    }
    self.total = total
    onDisk = ranges
  }

  /// The text form, as resume data records it.
  public var description: String {
    let ranges = onDisk.map { "\($0.lowerBound)-\($0.upperBound - 1)" }.joined(separator: ",")
    return "bytes=\(ranges)/\(total)"
  }

  /// The bytes on disk from byte 0 on without a gap: what Apple's URLSession can continue.
  public var contiguousPrefix: Int64 {
    guard let first = onDisk.first, first.lowerBound == 0 else { return 0 }
    return first.upperBound
  }

  /// The bytes on disk in all.
  public var bytesOnDisk: Int64 { onDisk.reduce(0) { $0 + Int64($1.count) } }

  /// Whether every byte is on disk.
  public var isComplete: Bool { contiguousPrefix == total }

  /// The ranges not on disk, ascending.
  public var missing: [Range<Int64>] {
    var gaps = [Range<Int64>]()
    var next: Int64 = 0
    for range in onDisk {
      if range.lowerBound > next { gaps.append(next..<range.lowerBound) }
      next = range.upperBound
    }
    if next < total { gaps.append(next..<total) }
    return gaps
  }

  /// The map with nothing past `length` on disk (a partial file found shorter than the map says).
  public func truncated(to length: Int64) -> SegmentMap {
    SegmentMap(total: total, onDisk: onDisk.map { $0.clamped(to: 0..<max(length, 0)) })
  }
}

import ResumeData

/// Who fetches which part of a segmented download, and how far each part has come: the scheduling
/// arithmetic alone, free of I/O, so that every case is tested directly.
///
/// The file is cut into segments that cover it without overlap. A segment's bytes from `start` to
/// `written` are on disk; `claimed` runs ahead of `written` by the chunk being written now; a
/// connection owns at most one segment and fetches it from `claimed` to `end`. When a connection
/// finds no segment left to take, it takes over the back half of the largest one still being
/// fetched (work stealing, as aria2 does): that segment's `end` moves down to where the new one
/// starts, and its connection stops there, so that no connection idles while much is left.
struct SegmentSchedule: Sendable, Hashable {
  /// A part of the file.
  struct Segment: Sendable, Hashable {
    /// The first byte.
    var start: Int64
    /// One past the last byte (moves down when the segment is split).
    var end: Int64
    /// One past the last byte on disk.
    var written: Int64
    /// One past the last byte handed out to be written (at least `written`).
    var claimed: Int64
    /// The connection fetching it, if one is.
    var owner: Int?

    var isDone: Bool { written >= end }
    var remaining: Int64 { end - claimed }
  }

  /// The complete length.
  let total: Int64
  /// Segments smaller than this are not split further.
  let minimumSize: Int64
  /// Ascending by `start`; together they cover `0..<total`.
  private(set) var segments: [Segment]

  /// A schedule for a file of `map.total` bytes of which `map.onDisk` are on disk.
  init(map: SegmentMap, minimumSize: Int64) {
    total = map.total
    self.minimumSize = max(minimumSize, 1)
    var segments = [Segment]()
    for range in map.onDisk {
      segments.append(
        Segment(
          start: range.lowerBound, end: range.upperBound, written: range.upperBound,
          claimed: range.upperBound))
    }
    for gap in map.missing {
      segments.append(
        Segment(
          start: gap.lowerBound, end: gap.upperBound, written: gap.lowerBound,
          claimed: gap.lowerBound))
    }
    self.segments = segments.sorted { $0.start < $1.start }
  }

  /// The ranges on disk.
  var map: SegmentMap {
    SegmentMap(total: total, onDisk: segments.map { $0.start..<$0.written })
  }

  /// Whether every byte is on disk.
  var isComplete: Bool { segments.allSatisfy(\.isDone) }

  /// Bytes on disk in all.
  var bytesOnDisk: Int64 { segments.reduce(0) { $0 + ($1.written - $1.start) } }

  /// The segment a connection is fetching, by its start (stable: a split moves only `end`).
  func segment(startingAt start: Int64) -> Segment? {
    index(of: start).map { segments[$0] }
  }

  private func index(of start: Int64) -> Int? {
    // Binary search: segments ascend by start.
    var low = 0
    var high = segments.count
    while low < high {
      let middle = (low + high) / 2
      if segments[middle].start < start { low = middle + 1 } else { high = middle }
    }
    return low < segments.count && segments[low].start == start ? low : nil
  }

  /// Splits the unfinished parts until there are `count` of them (or none is large enough to
  /// split): the largest is halved each time, so that `count` connections start at once.
  mutating func prepare(connections count: Int) {
    while segments.count(where: { !$0.isDone }) < count, split(owner: nil) != nil {}
  }

  /// How many of `count` connections have a part to fetch once `prepare(connections:)` has split
  /// what it could: fewer than asked when the unfinished bytes are under twice the minimum
  /// segment for each (a 2 MB file at the default 1 MiB minimum goes over one), at least one.
  func connectionsAtWork(of count: Int) -> Int {
    max(1, min(count, segments.count(where: { !$0.isDone })))
  }

  /// Gives `worker` a segment to fetch: the first unfinished one nobody fetches, else the back
  /// half of the largest one being fetched. Returns its start, or nil when there is nothing left
  /// worth taking (the last bytes are then left to their own connections).
  mutating func assign(to worker: Int) -> Int64? {
    if let index = segments.firstIndex(where: { !$0.isDone && $0.owner == nil }) {
      segments[index].owner = worker
      segments[index].claimed = segments[index].written
      return segments[index].start
    }
    return split(owner: worker)
  }

  /// Halves the unfinished segment with the most bytes left to claim, if it has at least twice
  /// the minimum; the back half, owned by `owner`, is inserted after it. Returns its start.
  private mutating func split(owner: Int?) -> Int64? {
    guard
      let index = segments.indices.filter({ !segments[$0].isDone }).max(by: {
        segments[$0].remaining < segments[$1].remaining
      }), segments[index].remaining >= 2 * minimumSize
    else { return nil }
    let old = segments[index]
    // The front half keeps what its connection has claimed, so no byte is written twice.
    let middle = old.claimed + old.remaining / 2
    segments[index].end = middle
    segments.insert(
      Segment(start: middle, end: old.end, written: middle, claimed: middle, owner: owner),
      at: index + 1)
    return middle
  }

  /// Hands out where the next `count` bytes of the segment at `start` go, and how many of them
  /// belong to it (fewer at its end; zero once it is complete or no longer `worker`'s).
  mutating func claim(_ start: Int64, worker: Int, count: Int) -> (offset: Int64, count: Int) {
    guard let index = index(of: start), segments[index].owner == worker else { return (0, 0) }
    let offset = segments[index].claimed
    let taken = Int(min(Int64(count), segments[index].end - offset))
    segments[index].claimed = offset + Int64(max(taken, 0))
    return (offset, max(taken, 0))
  }

  /// Records that the bytes claimed up to `through` are on disk.
  mutating func commit(_ start: Int64, through: Int64) {
    guard let index = index(of: start) else { return }
    segments[index].written = max(segments[index].written, min(through, segments[index].end))
  }

  /// Whether the segment at `start` has all its bytes on disk.
  func isDone(_ start: Int64) -> Bool {
    index(of: start).map { segments[$0].isDone } ?? true
  }

  /// Gives the segment back (its connection failed): what it claimed and did not write is
  /// claimed again by whoever takes it next.
  mutating func release(_ start: Int64, worker: Int) {
    guard let index = index(of: start), segments[index].owner == worker else { return }
    segments[index].owner = nil
    segments[index].claimed = segments[index].written
  }
}

import Foundation
import PortableFoundation
import ResumeData

/// The shared state of one segmented run: the schedule every connection takes its work from, what
/// the server said the file is, and why the run is stopping. Connections (on the delegate queue)
/// and the download's watchdog use it at once, so it lives behind one lock.
final class SegmentBook: Sendable {
  /// Why a run stops before the file is complete.
  enum Stop: Sendable, Hashable {
    /// Paused or cancelled.
    case paused
    /// A response showed the file is not the one being assembled: start over.
    case restart(String)
    /// A failure no retry mends.
    case failed(DownloadError)
  }

  /// What the first response told about the file: every segment must come from this version.
  struct Identity: Sendable, Hashable {
    /// The complete length.
    var total: Int64
    /// The strong ETag, if the server sent one.
    var entityTag: String?
    /// The Last-Modified date, if the server sent one.
    var lastModified: String?
    /// The validator sent as If-Range: the strong ETag, else Last-Modified.
    var validator: String { entityTag ?? lastModified ?? "" }
  }

  private struct State: Sendable {
    var schedule: SegmentSchedule?
    var identity: Identity?
    var stop: Stop?
    // Whether the schedule was set up (true) or the run ended before it was (false); nil while
    // the first response is awaited.
    var ready: Bool?
    var waiting: [CheckedContinuation<Bool, Never>] = []
  }

  private let state: Locked<State>

  /// A book for a run whose schedule comes from the first response (`prepare`), or from a map
  /// already on disk.
  init(schedule: SegmentSchedule? = nil, identity: Identity? = nil) {
    state = Locked(
      State(schedule: schedule, identity: identity, ready: schedule == nil ? nil : true))
  }

  /// What the server said the file is.
  var identity: Identity? { state.withLock { $0.identity } }

  /// Why the run stops, once it does.
  var stop: Stop? { state.withLock { $0.stop } }

  /// The ranges on disk, when the schedule is set up.
  var map: SegmentMap? { state.withLock { $0.schedule?.map } }

  /// Bytes on disk in all (0 before the schedule is set up).
  var bytesOnDisk: Int64 { state.withLock { $0.schedule?.bytesOnDisk ?? 0 } }

  /// Whether every byte is on disk.
  var isComplete: Bool { state.withLock { $0.schedule?.isComplete ?? false } }

  /// Sets up the schedule from the first response and lets the other connections start.
  func prepare(_ schedule: SegmentSchedule, identity: Identity) {
    settle(true) { state in
      state.schedule = schedule
      state.identity = identity
    }
  }

  /// Decides whether the schedule is set up (the first decision stands), after `change`, and
  /// wakes whoever waits for it.
  private func settle(_ ready: Bool, after change: (inout State) -> Void = { _ in }) {
    let waiting = state.withLock { state in
      change(&state)
      if state.ready == nil { state.ready = ready }
      defer { state.waiting = [] }
      return state.waiting
    }
    for continuation in waiting { continuation.resume(returning: ready) }
  }

  /// Waits until the schedule is set up (true) or the run ends without one (false).
  func waitUntilReady() async -> Bool {
    await withCheckedContinuation { continuation in
      let ready = state.withLock { state -> Bool? in
        if state.ready == nil { state.waiting.append(continuation) }
        return state.ready
      }
      if let ready { continuation.resume(returning: ready) }
    }
  }

  /// Records why the run stops (the first reason wins) and wakes whoever waits for the schedule.
  /// Returns whether this was the first reason.
  @discardableResult
  func stop(_ reason: Stop) -> Bool {
    var first = false
    settle(false) { state in
      first = state.stop == nil
      if first { state.stop = reason }
    }
    return first
  }

  /// Ends the wait for a schedule that will not come (the first response did not allow one).
  func abandon() {
    settle(false)
  }

  /// A segment for `worker` (see `SegmentSchedule.assign`): its start, and the range to ask for.
  func assign(to worker: Int) -> (start: Int64, range: ClosedRange<Int64>)? {
    state.withLock { state in
      guard state.stop == nil, let start = state.schedule?.assign(to: worker),
        let segment = state.schedule?.segment(startingAt: start)
      else { return nil }
      return (start, segment.claimed...(segment.end - 1))
    }
  }

  /// Where the next `count` bytes of `worker`'s segment go, and how many belong to it.
  func claim(_ start: Int64, worker: Int, count: Int) -> (offset: Int64, count: Int) {
    state.withLock { state in
      guard state.stop == nil else { return (0, 0) }
      return state.schedule?.claim(start, worker: worker, count: count) ?? (0, 0)
    }
  }

  /// Records bytes on disk; returns whether the segment is complete.
  func commit(_ start: Int64, through: Int64) -> Bool {
    state.withLock { state in
      state.schedule?.commit(start, through: through)
      return state.schedule?.isDone(start) ?? true
    }
  }

  /// Whether the segment at `start` is complete.
  func isDone(_ start: Int64) -> Bool {
    state.withLock { $0.schedule?.isDone(start) ?? true }
  }

  /// Gives a failed connection's segment back.
  func release(_ start: Int64, worker: Int) {
    state.withLock { $0.schedule?.release(start, worker: worker) }
  }
}

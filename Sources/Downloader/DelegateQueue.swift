import Dispatch
import Foundation

/// A transfer's URLSession delegate queue: serial, cheap per call, and with backpressure.
///
/// FoundationNetworking on Linux hands every chunk libcurl reads (16 KiB) to the delegate queue
/// with `addOperation(_:)`, from the session's own work queue, without waiting for the delegate: a
/// delegate slower than the network (disk, digest, a busy core) makes that queue, and memory, grow
/// without bound. Here `addOperation(_:)` makes the calling thread wait while `limit` calls are
/// already pending. That thread is the one that runs libcurl, so libcurl stops reading the socket,
/// the kernel's receive window fills, and TCP holds the server back: memory stays bounded and the
/// transfer goes on, in one request, at the delegate's pace.
///
/// The calls run in order, one at a time: a call added while nothing is pending runs at once on
/// the adding thread (so a delegate that waits, for the disk say, holds libcurl back directly);
/// calls added while one runs are drained, all in one go, on a serial dispatch queue.
/// `OperationQueue`'s own machinery (an operation object, locks and observers, and a dispatch for
/// each call) costs more than the delegate's work on a chunk, on the thread that runs libcurl; it
/// is only the type URLSession asks for here. `operationCount`, suspension and cancellation of the
/// inherited queue do not apply: nothing but URLSession adds to this queue, and it uses none of
/// them.
///
/// Waiting on URLSession's work queue must never outlast the transfer: `cancel()` on a task runs
/// synchronously on that queue, so `open()` (no more waiting) is called before any cancel, and a
/// delegate call, which may run on that very queue, must cancel asynchronously. A call added from
/// a running call never waits.
final class DelegateQueue: OperationQueue, @unchecked Sendable {
  private let limit: Int
  // Guards everything below it.
  private let condition = NSCondition()
  private var calls: [() -> Void] = []
  // Added and not yet finished (those being run included).
  private var pending = 0
  // A call is running (inline, or the queue is draining).
  private var draining = false
  // The thread running a call inline, if one is.
  private var inlineThread: pthread_t?
  private var isOpen = false
  private var waiters = 0
  private var largestBacklog = 0
  private let queue = DispatchQueue(label: "resumedata.transfer.delegate")
  private static let onQueue = DispatchSpecificKey<Bool>()

  /// A serial queue on which at most `limit` calls wait (at least one is always let in).
  init(limit: Int) {
    self.limit = max(limit, 1)
    super.init()
    maxConcurrentOperationCount = 1
    queue.setSpecific(key: Self.onQueue, value: true)
  }

  /// The largest backlog seen before `open()`.
  var peakBacklog: Int { condition.withLock { largestBacklog } }

  /// Stops all waiting, for good: the transfer is ending.
  func open() {
    condition.withLock {
      isOpen = true
      condition.broadcast()
    }
  }

  override func addOperation(_ block: @escaping @Sendable () -> Void) {
    enqueue(block)
  }

  override func addOperation(_ operation: Operation) {
    // Not used by URLSession, but kept in the same order as everything else.
    enqueue { operation.start() }
  }

  private func enqueue(_ call: @escaping () -> Void) {
    condition.lock()
    if !isOpen, pending >= limit, !isDelegateThread() {
      waiters += 1
      repeat { condition.wait() } while !isOpen && pending > limit / 2
      waiters -= 1
    }
    pending += 1
    if !isOpen { largestBacklog = max(largestBacklog, pending) }
    guard !draining else {
      calls.append(call)
      condition.unlock()
      return
    }
    // Nothing is pending: the call runs here and now, on URLSession's thread, as the queue would
    // run it next. Handing each chunk to another thread cost a wake-up and a context switch per
    // 16 KiB, more than the delegate's work on it.
    draining = true
    inlineThread = pthread_self()
    condition.unlock()
    call()
    condition.lock()
    inlineThread = nil
    pending -= 1
    if waiters > 0, pending <= limit / 2 { condition.signal() }
    // Calls added meanwhile (from another thread, or by the call itself) run on the queue.
    let handOff = !calls.isEmpty
    draining = handOff
    condition.unlock()
    if handOff { queue.async { [self] in drain() } }
  }

  /// Whether the calling thread is running a call of this queue (a call added from there must
  /// never wait for room: it would wait for itself).
  private func isDelegateThread() -> Bool {
    if let inlineThread, pthread_equal(inlineThread, pthread_self()) != 0 { return true }
    return DispatchQueue.getSpecific(key: Self.onQueue) == true
  }

  /// Runs the pending calls, and those added meanwhile, in order.
  private func drain() {
    var batch: [() -> Void] = []
    condition.lock()
    while !calls.isEmpty {
      swap(&batch, &calls)
      condition.unlock()
      for call in batch {
        call()
        condition.lock()
        pending -= 1
        // Signalled only when someone waits, and only once half the room is free: URLSession
        // then adds a run of chunks in one go instead of waking for each.
        if waiters > 0, pending <= limit / 2 { condition.signal() }
        condition.unlock()
      }
      batch.removeAll(keepingCapacity: true)
      condition.lock()
    }
    draining = false
    condition.unlock()
  }
}

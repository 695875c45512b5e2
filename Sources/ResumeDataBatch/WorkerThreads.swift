import PortableFoundation

// POSIX threads and condition variables for the batch engine's workers: Foundation's `Thread` and
// `NSCondition` are not in FoundationEssentials. The one difference between the C libraries that
// matters here (Darwin's `pthread_t` is a pointer, optional in `pthread_create`'s signature;
// glibc's is an integer) is handled in `startThread`.

/// A mutex and a condition variable over it, for threads that wait for work.
final class ThreadCondition: @unchecked Sendable {
  private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
  private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

  init() {
    // Both fail only for want of memory or with bad attributes, and none are given.
    precondition(pthread_mutex_init(mutex, nil) == 0, "pthread_mutex_init failed")
    precondition(pthread_cond_init(condition, nil) == 0, "pthread_cond_init failed")
  }

  deinit {
    pthread_cond_destroy(condition)
    pthread_mutex_destroy(mutex)
    condition.deallocate()
    mutex.deallocate()
  }

  /// Runs `body` with the mutex held.
  func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    return try body()
  }

  /// Releases the mutex (which the caller holds, inside `withLock`), waits for a broadcast and
  /// takes the mutex again.
  func wait() { pthread_cond_wait(condition, mutex) }

  /// Wakes every waiting thread.
  func broadcast() { pthread_cond_broadcast(condition) }
}

/// Starts a detached thread that runs `body`.
func startThread(_ body: @escaping @Sendable () -> Void) {
  final class Box {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
  }
  let context = Unmanaged.passRetained(Box(body)).toOpaque()
  let entry: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = { context in
    guard let context else { return nil }
    Unmanaged<Box>.fromOpaque(context).takeRetainedValue().body()
    return nil
  }
  #if canImport(Darwin)
    var thread: pthread_t?
  #else
    var thread = pthread_t()
  #endif
  let started = pthread_create(&thread, nil, entry, context)
  // Without the thread the batch cannot make progress; the system refuses one only when it is out
  // of threads or memory.
  precondition(started == 0, "cannot start a worker thread: \(String(cString: strerror(started)))")
  #if canImport(Darwin)
    if let thread { pthread_detach(thread) }
  #else
    pthread_detach(thread)
  #endif
}

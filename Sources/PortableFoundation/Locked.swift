// The one place the package chooses its lock. Synchronization's `Mutex` holds its state inline
// (no allocation) but exists on Apple platforms only from macOS 15 and iOS 18; there
// `OSAllocatedUnfairLock` (macOS 13, iOS 16, tvOS 16, watchOS 9) takes its place, which is what
// lets Package.swift declare those lower platforms.
#if canImport(Darwin)
  internal import os
#else
  internal import Synchronization
#endif

/// A value that one thread at a time reads or changes: the package's lock on every platform.
///
/// It is `Mutex` where Synchronization has it for every supported system (Linux, Windows,
/// Android) and `OSAllocatedUnfairLock` on Apple platforms.
package struct Locked<State: ~Copyable>: ~Copyable, @unchecked Sendable {
  #if canImport(Darwin)
    // The state in a box of its own beside the lock: `OSAllocatedUnfairLock`'s own state must be
    // copyable, and a digest's is not.
    private final class Storage {
      var state: State
      init(_ state: consuming State) { self.state = state }
    }
    private let lock = OSAllocatedUnfairLock()
    private let storage: Storage
  #else
    private let lock: Mutex<State>
  #endif

  /// A lock holding `initial`.
  package init(_ initial: consuming sending State) {
    #if canImport(Darwin)
      storage = Storage(initial)
    #else
      lock = Mutex(initial)
    #endif
  }

  /// Runs `body` on the state with the lock held, and returns what it returns.
  package borrowing func withLock<Result, Failure: Error>(
    _ body: (inout sending State) throws(Failure) -> sending Result
  ) throws(Failure) -> sending Result {
    #if canImport(Darwin)
      lock.lock()
      defer { lock.unlock() }
      return try body(&storage.state)
    #else
      return try lock.withLock(body)
    #endif
  }
}

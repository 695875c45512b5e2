// The one place the package chooses its lock. Synchronization's `Mutex` holds its state inline
// (no allocation) but exists on Apple platforms only from macOS 15 and iOS 18; there
// `OSAllocatedUnfairLock` (macOS 13, iOS 16, tvOS 16, watchOS 9) takes its place, which is what
// lets Package.swift declare those lower platforms.
#if canImport(Darwin)
  public import os
#else
  public import Synchronization
#endif

/// A value that one thread at a time reads or changes: the package's lock on every platform.
///
/// It is `Mutex` where Synchronization has it for every supported system (Linux, Windows,
/// Android) and `OSAllocatedUnfairLock` on Apple platforms.
public struct Locked<State: ~Copyable>: ~Copyable, @unchecked Sendable {
  #if canImport(Darwin)
    // The state in a box of its own beside the lock: `OSAllocatedUnfairLock`'s own state must be
    // copyable, and a digest's is not.
    @usableFromInline final class Storage {
      @usableFromInline var state: State
      @usableFromInline init(_ state: consuming State) { self.state = state }
    }
    @usableFromInline let lock = OSAllocatedUnfairLock()
    @usableFromInline let storage: Storage
  #else
    @usableFromInline let lock: Mutex<State>
  #endif

  // Public and inlinable so that each caller gets code specialized for its state: unspecialized
  // generic code looks up `Locked<State>`'s metadata at run time on every call (about 9,000
  // instructions a repaired batch record). Swift 6.3 does not inline a `package` function across
  // modules without `-package-cmo`, an unsafe flag; PortableFoundation is no product, so `public`
  // reaches only this package's targets.

  /// A lock holding `initial`.
  @inlinable public init(_ initial: consuming sending State) {
    #if canImport(Darwin)
      storage = Storage(initial)
    #else
      lock = Mutex(initial)
    #endif
  }

  /// Runs `body` on the state with the lock held, and returns what it returns.
  @inlinable public borrowing func withLock<Result, Failure: Error>(
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

import Foundation

/// The C allocator, where it can be told to give freed memory back.
enum Allocator {
  private typealias Trim = @convention(c) (Int) -> Int32

  // glibc's `malloc_trim`, looked up at run time: it is in no module Swift imports, and other C
  // libraries (musl) do not have it.
  private static let trim: Trim? = {
    #if os(Linux)
      guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "malloc_trim") else { return nil }
      return unsafeBitCast(symbol, to: Trim.self)
    #else
      return nil
    #endif
  }()

  /// Returns the free pages the allocator holds to the system.
  ///
  /// A transfer allocates a 16 KiB buffer for every chunk (FoundationNetworking copies each one
  /// out of libcurl) on URLSession's threads and frees it on the delegate's, among many small
  /// objects of its own. glibc keeps what is freed in per-thread arenas, fragmented, and hands
  /// little of it back: a process's resident memory grew by about 16 MiB per GiB downloaded, with
  /// never more than a few MiB in use. Trimming now and then keeps it flat.
  static func releaseFreeMemory() {
    _ = trim?(0)
  }
}

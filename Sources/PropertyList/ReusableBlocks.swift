import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Blocks of memory kept by each thread for the next record: the copy of a binary plist a view
/// reads, its parser's per-object arrays, a decoded blob, a request archive's bytes.
///
/// A record of a batch makes about ten blocks of 1 to 64 KiB and frees them before the next: each
/// took glibc's general path (about 300 instructions to allocate and 160 to free, besides the
/// cache misses of memory not touched since), which keeps only blocks of up to 1 KiB per thread.
/// Here each thread keeps up to `slotsPerClass` blocks of each power-of-two size from 1 KiB to
/// 64 KiB, at most `pooledBytesPerThread` bytes in all: a block given back goes to the thread
/// that gives it (a block made on one thread may be given back on another), and a thread's blocks
/// are freed when it ends. Larger blocks, and blocks beyond those bounds, are plain `malloc` and
/// `free`.
///
/// Every block from `take` goes back through `give` (or, for `Data`, through `data(copying:)`'s
/// deallocator), never `free`: a word before it says which size it is.
package enum ReusableBlocks {
  /// The size classes: blocks of 1 KiB << class, for classes 0 to `classCount - 1`.
  static let classCount = 7
  /// Blocks kept per class and thread.
  static let slotsPerClass = 8
  /// The most bytes of blocks a thread keeps.
  package static let pooledBytesPerThread = 256 << 10
  /// Bytes before each block: its class (or `unpooled`), keeping the block 16-byte aligned.
  static let header = 16
  /// The class word of a block outside the classes.
  static let unpooled = -1
  /// Below this many bytes `data(copying:)` makes an ordinary `Data`: glibc keeps such blocks per
  /// thread itself, and `Data` holds up to 14 bytes inline.
  package static let smallestPooledData = 512

  /// One thread's blocks: `slotsPerClass` pointers per class, then each class's count, then the
  /// bytes kept.
  private struct Pool {
    var slots: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    var counts: UnsafeMutablePointer<Int>
    var bytes: UnsafeMutablePointer<Int>
  }

  // The key of each thread's pool; its destructor frees the pool's blocks when the thread ends.
  private static let key: pthread_key_t = {
    var key = pthread_key_t()
    let created = pthread_key_create(&key) { pool in
      guard let pool else { return }
      ReusableBlocks.freePool(pool)
    }
    precondition(created == 0, "pthread_key_create failed")
    return key
  }()

  // The memory of a pool: the slots, the counts and the byte count, in one block.
  private static var poolBytes: Int {
    (classCount * slotsPerClass + classCount + 1) * MemoryLayout<Int>.stride
  }

  private static func pool(_ memory: UnsafeMutableRawPointer) -> Pool {
    let slots = memory.bindMemory(
      to: UnsafeMutableRawPointer?.self, capacity: classCount * slotsPerClass)
    let counts = (memory + classCount * slotsPerClass * MemoryLayout<Int>.stride).bindMemory(
      to: Int.self, capacity: classCount + 1)
    return Pool(slots: slots, counts: counts, bytes: counts + classCount)
  }

  // The calling thread's pool, made on first use; nil only when no memory is left for one.
  @inline(__always)
  private static func currentPool() -> Pool? {
    if let memory = pthread_getspecific(key) { return pool(memory) }
    guard let memory = calloc(1, poolBytes) else { return nil }
    guard pthread_setspecific(key, memory) == 0 else {
      free(memory)
      return nil
    }
    return pool(memory)
  }

  private static func freePool(_ memory: UnsafeMutableRawPointer) {
    let pool = pool(memory)
    for slot in 0..<(classCount * slotsPerClass) { free(pool.slots[slot]) }
    free(memory)
  }

  // The class of a block of `total` bytes (header included), or `unpooled`.
  @inline(__always)
  private static func sizeClass(_ total: Int) -> Int {
    if total <= 1024 { return 0 }
    let sizeClass = Int.bitWidth - (total &- 1).leadingZeroBitCount - 10
    return sizeClass < classCount ? sizeClass : unpooled
  }

  /// A block of at least `count` bytes, 16-byte aligned; nil when there is no memory for it.
  package static func take(_ count: Int) -> UnsafeMutableRawPointer? {
    guard count >= 0, count <= Int.max - header else { return nil }
    let sizeClass = sizeClass(count &+ header)
    var block: UnsafeMutableRawPointer?
    if sizeClass != unpooled, let pool = currentPool(), pool.counts[sizeClass] > 0 {
      pool.counts[sizeClass] &-= 1
      let slot = sizeClass &* slotsPerClass &+ pool.counts[sizeClass]
      block = pool.slots[slot]
      pool.slots[slot] = nil
      pool.bytes.pointee &-= 1024 << sizeClass
    } else {
      block = malloc(sizeClass == unpooled ? count &+ header : 1024 << sizeClass)
    }
    guard let block else { return nil }
    block.storeBytes(of: sizeClass, as: Int.self)
    return block + header
  }

  /// Gives back a block `take` returned, for the calling thread to reuse.
  package static func give(_ pointer: UnsafeMutableRawPointer) {
    let block = pointer - header
    let sizeClass = block.load(as: Int.self)
    guard sizeClass != unpooled, let pool = currentPool(), pool.counts[sizeClass] < slotsPerClass,
      pool.bytes.pointee &+ 1024 << sizeClass <= pooledBytesPerThread
    else { return free(block) }
    pool.slots[sizeClass &* slotsPerClass &+ pool.counts[sizeClass]] = block
    pool.counts[sizeClass] &+= 1
    pool.bytes.pointee &+= 1024 << sizeClass
  }

  /// `Data` owning a block of `count` bytes from `take`, filled by `fill`: given back when the
  /// last copy of the `Data` goes. Nil when there is no memory (`fill` is then not called).
  package static func data(
    count: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void
  ) -> Data? {
    guard let block = take(count) else { return nil }
    fill(UnsafeMutableRawBufferPointer(start: block, count: count))
    return Data(bytesNoCopy: block, count: count, deallocator: .custom { block, _ in give(block) })
  }

  /// A copy of `count` bytes at `bytes`: in a reused block when there are at least
  /// `smallestPooledData` of them.
  package static func data(copying bytes: UnsafeRawPointer, count: Int) -> Data {
    guard count >= smallestPooledData,
      let data = data(
        count: count, { $0.copyMemory(from: UnsafeRawBufferPointer(start: bytes, count: count)) })
    else { return Data(bytes: bytes, count: count) }
    return data
  }

  /// Blocks the calling thread keeps, by class (for tests).
  package static func keptBlocks() -> [Int] {
    guard let pool = currentPool() else { return [] }
    return (0..<classCount).map { pool.counts[$0] }
  }
}

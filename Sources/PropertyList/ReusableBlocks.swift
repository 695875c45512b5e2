import CVectorLoops
import PortableFoundation

/// Blocks of memory kept by each thread for the next record: the copy of a binary plist a view
/// reads, its parser's per-object arrays, a decoded blob, a request archive's bytes.
///
/// A record of a batch makes about ten blocks of 1 to 64 KiB and frees them before the next: each
/// took glibc's general path (about 300 instructions to allocate and 160 to free, besides the
/// cache misses of memory not touched since), which keeps only blocks of up to 1 KiB per thread.
/// Here each thread keeps up to 8 blocks of each power-of-two size from 1 KiB to 64 KiB, at most
/// 256 KiB in all: a block given back goes to the thread that gives it (a block made on one thread
/// may be given back on another), and a thread's blocks are freed when it ends. Larger blocks, and
/// blocks beyond those bounds, are plain `malloc` and `free`.
///
/// Every block from `take` goes back through `give` (or, for `Data`, through `data(adopting:count:)`'s
/// deallocator), never `free`: a word before it says which size it is. The pools are C's
/// (`reusable_blocks.c`): a thread-local variable there is one load, where a pthread key's lookup
/// cost as much as the rest of taking a block.
package enum ReusableBlocks {
  /// Below this many bytes `data(copying:count:)` makes an ordinary `Data`: glibc keeps such
  /// blocks per thread itself, and `Data` holds up to 14 bytes inline.
  package static let smallestPooledData = 512

  /// A block of at least `count` bytes, 16-byte aligned; nil when there is no memory for it.
  @inline(__always)
  package static func take(_ count: Int) -> UnsafeMutableRawPointer? {
    guard count >= 0 else { return nil }
    return cvl_block_take(count)
  }

  /// Gives back a block `take` returned, for the calling thread to reuse.
  @inline(__always)
  package static func give(_ block: UnsafeMutableRawPointer) {
    cvl_block_give(block)
  }

  /// A block of at least `count` bytes holding the first `kept` bytes of `block` (a block from
  /// `take`, no longer to be used); nil when there is no memory (`block` is then unchanged).
  @inline(__always)
  package static func resize(_ block: UnsafeMutableRawPointer, keeping kept: Int, to count: Int)
    -> UnsafeMutableRawPointer?
  {
    guard kept >= 0, count >= 0 else { return nil }
    return cvl_block_resize(block, kept, count)
  }

  /// `Data` of the first `count` bytes of `block` (from `take`), which it owns: given back when
  /// the last copy of the `Data` goes.
  @inline(__always)
  package static func data(adopting block: UnsafeMutableRawPointer, count: Int) -> Data {
    Data(bytesNoCopy: block, count: count, deallocator: .custom { block, _ in give(block) })
  }

  /// A copy of `count` bytes at `bytes`: in a reused block when there are at least
  /// `smallestPooledData` of them.
  package static func data(copying bytes: UnsafeRawPointer, count: Int) -> Data {
    guard count >= smallestPooledData, let block = take(count) else {
      return Data(bytes: bytes, count: count)
    }
    block.copyMemory(from: bytes, byteCount: count)
    return data(adopting: block, count: count)
  }

  /// Memory for `capacity` values of `Element` (aligned to at most 16 bytes) in a block from
  /// `take`, going back through `give`: what `UnsafeMutablePointer.allocate` gives, and as it
  /// does, a stop when there is no memory.
  package static func allocate<Element>(_: Element.Type, capacity: Int)
    -> UnsafeMutablePointer<Element>
  {
    precondition(MemoryLayout<Element>.alignment <= 16)
    let (bytes, overflow) = capacity.multipliedReportingOverflow(by: MemoryLayout<Element>.stride)
    guard !overflow, let block = take(bytes) else { fatalError("out of memory") }
    return block.bindMemory(to: Element.self, capacity: capacity)
  }

  /// Whether blocks are kept at all: not in a build with AddressSanitizer (the fuzz builds),
  /// where each block is an allocation of its own, of the size asked for, so that reading past
  /// its end or after it was given back is caught.
  package static var pools: Bool { cvl_blocks_pooled() != 0 }

  /// Blocks the calling thread keeps, by size class (for tests).
  package static func keptBlocks() -> [Int] {
    var counts = [Int32](repeating: 0, count: Int(CVL_BLOCK_CLASSES))
    counts.withUnsafeMutableBufferPointer { cvl_blocks_kept($0.baseAddress!) }
    return counts.map(Int.init)
  }
}

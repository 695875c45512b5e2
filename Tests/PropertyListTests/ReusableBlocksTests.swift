import Foundation
import PropertyList
import Testing

/// Runs `body` on a thread of its own, whose pool of blocks starts empty, and returns its result.
private func onNewThread<Result: Sendable>(_ body: @escaping @Sendable () -> Result) -> Result {
  let done = DispatchSemaphore(value: 0)
  nonisolated(unsafe) var result: Result?
  let thread = Thread {
    result = body()
    done.signal()
  }
  thread.start()
  done.wait()
  return result!
}

@Suite(
  "Blocks reused by a thread",
  .enabled(if: ReusableBlocks.pools, "built with AddressSanitizer: no block is kept"))
struct ReusableBlocksTests {
  @Test("a block given back is the next of its size class taken on that thread")
  func reuse() {
    let (first, second, third, kept) = onNewThread {
      let block = ReusableBlocks.take(3_000)!
      ReusableBlocks.give(block)
      let kept = ReusableBlocks.keptBlocks()
      // 4,000 bytes and the 16-byte header still fit the 4 KiB class: the same block.
      let again = ReusableBlocks.take(4_000)!
      // The class is empty again: a new block.
      let other = ReusableBlocks.take(4_000)!
      ReusableBlocks.give(again)
      ReusableBlocks.give(other)
      return (UInt(bitPattern: block), UInt(bitPattern: again), UInt(bitPattern: other), kept)
    }
    #expect(first == second)
    #expect(third != first)
    #expect(kept == [0, 0, 1, 0, 0, 0, 0])
    #expect(first % 16 == 0)
  }

  @Test(
    "each size in its class, and blocks past 64 KiB never kept",
    arguments: [
      (0, 0), (1, 0), (1_008, 0), (1_009, 1), (2_032, 1), (2_033, 2), (65_520, 6), (65_521, -1),
      (1 << 20, -1),
    ])
  func sizeClasses(_ count: Int, _ sizeClass: Int) {
    let kept = onNewThread {
      let block = ReusableBlocks.take(count)!
      // Every byte asked for can be written.
      block.initializeMemory(as: UInt8.self, repeating: 0xA5, count: count)
      ReusableBlocks.give(block)
      return ReusableBlocks.keptBlocks()
    }
    var expected = [Int](repeating: 0, count: 7)
    if sizeClass >= 0 { expected[sizeClass] = 1 }
    #expect(kept == expected)
  }

  @Test("a thread keeps at most 8 blocks of a class, and at most 256 KiB in all")
  func bounds() {
    let kept = onNewThread {
      let small = (0..<10).map { _ in ReusableBlocks.take(1_000)! }
      small.forEach(ReusableBlocks.give)
      // Five blocks of the 64 KiB class: a fourth would pass 256 KiB with the 8 KiB kept.
      let large = (0..<5).map { _ in ReusableBlocks.take(60_000)! }
      large.forEach(ReusableBlocks.give)
      return ReusableBlocks.keptBlocks()
    }
    #expect(kept == [8, 0, 0, 0, 0, 0, 3])
  }

  @Test("a block taken on one thread and given back on another is kept by the other")
  func acrossThreads() {
    let block = onNewThread { UInt(bitPattern: ReusableBlocks.take(5_000)!) }
    let (kept, reused) = onNewThread {
      ReusableBlocks.give(UnsafeMutableRawPointer(bitPattern: block)!)
      let kept = ReusableBlocks.keptBlocks()
      let reused = ReusableBlocks.take(5_000)!
      ReusableBlocks.give(reused)
      return (kept, UInt(bitPattern: reused))
    }
    #expect(kept == [0, 0, 0, 1, 0, 0, 0])
    #expect(reused == block)
  }

  @Test("Data copied into a block holds the bytes, gives the block back when it goes, and can grow")
  func data() {
    let (equal, grown, kept) = onNewThread {
      let bytes = (0..<3_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
      var kept: [Int] = []
      var equal = false
      var grown = false
      do {
        var data = bytes.withUnsafeBytes {
          ReusableBlocks.data(copying: $0.baseAddress!, count: $0.count)
        }
        let copy = data
        equal = Array(data) == bytes
        // Growing copies the bytes out of the block (the copy still holds it).
        data.append(contentsOf: [1, 2, 3])
        grown = Array(data) == bytes + [1, 2, 3] && Array(copy) == bytes
      }
      kept = ReusableBlocks.keptBlocks()
      return (equal, grown, kept)
    }
    #expect(equal)
    #expect(grown)
    #expect(kept == [0, 0, 1, 0, 0, 0, 0])
  }

  @Test("Data in a block, the only copy, grows and shrinks with its bytes kept")
  func uniqueDataGrows() {
    let (grown, kept, shrunk) = onNewThread {
      let bytes = [UInt8](repeating: 0x5A, count: 2_000)
      var data = bytes.withUnsafeBytes {
        ReusableBlocks.data(copying: $0.baseAddress!, count: $0.count)
      }
      data.append(contentsOf: [UInt8](repeating: 0x33, count: 100_000))
      let grown = Array(data) == bytes + [UInt8](repeating: 0x33, count: 100_000)
      // The block was given back when the bytes moved out of it.
      let kept = ReusableBlocks.keptBlocks()
      data.removeLast(101_000)
      return (grown, kept, Array(data) == [UInt8](repeating: 0x5A, count: 1_000))
    }
    #expect(grown)
    #expect(kept == [0, 1, 0, 0, 0, 0, 0])
    #expect(shrunk)
  }

  @Test(
    "a block resized keeps its first bytes, and stays where it is within its size class",
    arguments: [
      (100, 1_000, true), (1_000, 3_000, false), (3_000, 100, false), (60_000, 100_000, false),
      // Beyond the classes, `realloc` decides.
      (100_000, 300_000, nil), (300_000, 2_000, false),
    ] as [(Int, Int, Bool?)])
  func resize(_ count: Int, _ newCount: Int, _ staysInPlace: Bool?) {
    let (kept, inPlace) = onNewThread {
      let block = ReusableBlocks.take(count)!
      let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
      block.copyMemory(from: bytes, byteCount: count)
      let resized = ReusableBlocks.resize(block, keeping: count, to: newCount)!
      // Every byte of the new size can be written.
      (resized + min(count, newCount)).initializeMemory(
        as: UInt8.self, repeating: 0xEE, count: newCount - min(count, newCount))
      let kept =
        Array(UnsafeRawBufferPointer(start: resized, count: min(count, newCount)))
        == Array(bytes.prefix(newCount))
      let inPlace = resized == block
      ReusableBlocks.give(resized)
      return (kept, inPlace)
    }
    #expect(kept)
    if let staysInPlace { #expect(inPlace == staysInPlace) }
  }

  @Test("fewer than 512 bytes are an ordinary Data", arguments: [0, 1, 14, 511])
  func smallData(_ count: Int) {
    let (equal, kept) = onNewThread {
      let bytes = [UInt8](repeating: 0x42, count: count)
      let data = bytes.withUnsafeBytes {
        ReusableBlocks.data(
          copying: $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, count: count)
      }
      let equal = Array(data) == bytes
      return (equal, ReusableBlocks.keptBlocks())
    }
    #expect(equal)
    #expect(kept == [0, 0, 0, 0, 0, 0, 0])
  }
}

/// Looking for a few kinds of byte in text eight bytes at a time: the writers copy text whole
/// when it holds none of the bytes they must escape, and most text holds none, so this scan is
/// most of what writing it costs.
package enum ByteScan {
  @usableFromInline static var ones: UInt64 { 0x0101_0101_0101_0101 }
  @usableFromInline static var highs: UInt64 { 0x8080_8080_8080_8080 }

  /// Whether a byte of `word` may equal `byte`: a false answer is exact (the borrow that flags a
  /// zero byte runs on only from a zero byte, so it may also flag the byte above one).
  @inlinable @inline(__always)
  package static func mayHave(_ byte: UInt8, in word: UInt64) -> Bool {
    let flipped = word ^ (ones &* UInt64(byte))
    return (flipped &- ones) & ~flipped & highs != 0
  }

  /// Whether a byte of `word` may be below `bound` (at most 0x80); a false answer is exact.
  @inlinable @inline(__always)
  package static func mayHave(below bound: UInt8, in word: UInt64) -> Bool {
    (word &- (ones &* UInt64(bound))) & ~word & highs != 0
  }

  /// Whether a byte of `word` is 0x80 or above.
  @inlinable @inline(__always)
  package static func hasHigh(_ word: UInt64) -> Bool { word & highs != 0 }

  /// Whether a byte of `text` is one `isWanted` picks: eight bytes a step, a word that
  /// `mayHold` says holds none passed over, any other word and the tail looked at byte by byte.
  @inlinable @inline(__always)
  package static func contains(
    _ text: UnsafeRawBufferPointer, mayHold: (UInt64) -> Bool, where isWanted: (UInt8) -> Bool
  ) -> Bool {
    var position = 0
    while text.count &- position >= 8 {
      if mayHold(text.loadUnaligned(fromByteOffset: position, as: UInt64.self)) {
        for offset in position..<(position &+ 8) where isWanted(text[offset]) { return true }
      }
      position &+= 8
    }
    while position < text.count {
      if isWanted(text[position]) { return true }
      position &+= 1
    }
    return false
  }
}

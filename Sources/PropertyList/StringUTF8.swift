@_spi(Writing) extension String {
  /// Calls `body` with the string's UTF-8 bytes: read in place where the string holds them
  /// contiguously (every native string), else from a copy made native. `withUTF8` needs a mutable
  /// string, and the copy a caller makes for it retains and releases the string's storage, which
  /// on the writers' paths cost more than the bytes' use.
  @inlinable @inline(__always)
  public func withUTF8InPlace<Result>(
    _ body: (UnsafeBufferPointer<UInt8>) throws -> Result
  ) rethrows -> Result {
    if let result = try utf8.withContiguousStorageIfAvailable(body) { return result }
    var copy = self
    return try copy.withUTF8(body)
  }
}

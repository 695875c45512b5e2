import PortableFoundation

/// Reading a descriptor to its end, for what commands read whole (standard input) and the files
/// the downloader keeps (its task list): interrupted reads go on, and a limit stops a stream that
/// does not end (`cat /dev/zero |`) before it exhausts memory.
package enum DescriptorReads {
  /// Why a read stopped.
  package enum Failure: Error, Equatable, Sendable {
    /// The system's error (`errno`).
    case system(Int32)
    /// More bytes than the limit given.
    case longerThan(Int)

    /// The failure as an `errno`: a limit passed is EFBIG ("File too large").
    package var code: Int32 {
      switch self {
      case .system(let code): code
      case .longerThan: EFBIG
      }
    }
  }

  /// Reads into a buffer, retrying when a signal interrupts the read.
  ///
  /// - Returns: the number of bytes read, 0 at the end of the input.
  package static func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer)
    throws(Failure) -> Int
  {
    while true {
      let count = systemRead(descriptor, buffer.baseAddress, buffer.count)
      if count >= 0 { return count }
      guard errno == EINTR else { throw .system(errno) }
    }
  }

  /// Reads to the end, at most `limit` bytes.
  package static func readAll(_ descriptor: Int32, limit: Int = .max) throws(Failure) -> Data {
    var data = Data()
    let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
    defer { chunk.deallocate() }
    while true {
      let count = try read(descriptor, into: chunk)
      if count == 0 { return data }
      guard count <= limit - data.count else { throw .longerThan(limit) }
      data.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[..<count]))
    }
  }
}

/// read(2), under a name of its own so that the C library's function is found from inside types that
/// have a `read` of their own.
@inline(__always)
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int)
  -> Int
{
  read(descriptor, buffer, count)
}

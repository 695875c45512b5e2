import Foundation
import Testing

@testable import ResumeDataBatch

/// Reading a descriptor to its end, as standard input is read: bounded, and failures told.
@Suite("FileAccess.readAll: standard input's reader")
struct FileAccessTests {
  /// The bytes of a file of `count` bytes, read through a descriptor with `limit`.
  static func readAll(count: Int, limit: Int) throws -> Result<Data, InputReadError> {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent(
      "resumedata-readall-\(UUID().uuidString)")
    let bytes = Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) })
    try bytes.write(to: url)
    defer { try? FileManager.default.removeItem(at: url) }
    let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
    try #require(descriptor >= 0)
    defer { close(descriptor) }
    let result = Result { () throws(InputReadError) in
      try FileAccess.readAll(descriptor, limit: limit)
    }
    if case .success(let data) = result { #expect(data == bytes) }
    return result
  }

  @Test(
    "Up to the limit is read whole; one byte more is refused, also past a 64 KiB read",
    arguments: [
      (0, 10, true), (10, 10, true), (11, 10, false), (65_536, 65_536, true),
      (65_537, 65_536, false), (200_000, 200_000, true), (200_000, 199_999, false),
    ])
  func limit(count: Int, limit: Int, fits: Bool) throws {
    let result = try Self.readAll(count: count, limit: limit)
    if fits {
      #expect(throws: Never.self) { try result.get() }
    } else {
      #expect(result == .failure(InputReadError("larger than the \(limit)-byte input limit")))
    }
  }

  @Test("A descriptor that cannot be read: the system's reason, not a crash")
  func unreadable() throws {
    let directory = open("/", O_RDONLY | O_CLOEXEC)
    try #require(directory >= 0)
    defer { close(directory) }
    #expect(
      Result { () throws(InputReadError) in try FileAccess.readAll(directory, limit: 10) }
        == .failure(InputReadError("Is a directory")))
    #expect(
      Result { () throws(InputReadError) in try FileAccess.readAll(-1, limit: 10) }
        == .failure(InputReadError("Bad file descriptor")))
  }
}

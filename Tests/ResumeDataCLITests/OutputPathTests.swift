import Dispatch
import Foundation
import OutputFiles
import Synchronization
import TestHTTPServer
import TestSupport
import Testing

/// Reads a FIFO to its end on a thread of its own, as the program at its other end would.
private final class FIFOReader: Sendable {
  private let result = Mutex<Data?>(nil)
  private let done = DispatchSemaphore(value: 0)

  init(_ path: String) {
    Thread.detachNewThread { [self] in
      var data = Data()
      let descriptor = open(path, O_RDONLY | O_CLOEXEC)
      if descriptor >= 0 {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
          let count = read(descriptor, &buffer, buffer.count)
          if count <= 0 { break }
          data.append(contentsOf: buffer[..<count])
        }
        close(descriptor)
      }
      result.withLock { $0 = data }
      done.signal()
    }
  }

  /// What was read, or nil when the writer never came within 30 seconds (the FIFO was replaced
  /// instead of written into).
  func wait() -> Data? {
    guard done.wait(timeout: .now() + 30) == .success else { return nil }
    return result.withLock { $0 }
  }
}

/// The kind of a file, not following a link: `S_IFREG`, `S_IFLNK`, `S_IFIFO`, …
private func kind(_ path: String) -> mode_t {
  var status = stat()
  guard lstat(path, &status) == 0 else { return 0 }
  return status.st_mode & S_IFMT
}

/// A file's permission bits.
private func permissions(_ path: String) -> mode_t {
  var status = stat()
  guard stat(path, &status) == 0 else { return 0 }
  return status.st_mode & 0o7777
}

/// A file's bytes.
private func contents(_ path: String) throws -> Data {
  try Data(contentsOf: URL(fileURLWithPath: path))
}

/// Runs the built tool with its standard output (and, when given, input) on the handles given,
/// as a shell's redirections would set them; returns its exit status and standard error.
private func runRedirected(
  _ arguments: [String], output: FileHandle, input: FileHandle? = nil
) throws -> (status: Int32, error: String) {
  let process = Process()
  process.executableURL = executable
  process.arguments = arguments
  if let input { process.standardInput = input }
  process.standardOutput = output
  let stderr = Pipe()
  process.standardError = stderr
  process.environment = ["SWIFT_BACKTRACE": "enable=no"]
  try process.run()
  let error = stderr.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  return (process.terminationStatus, String(decoding: error, as: UTF8.self))
}

/// `-o`, `--in-place`, `--resume-data` and `download -o` write where a shell's `>` would: through
/// symbolic links, into FIFOs and devices, and never over either.
@Suite("Output paths: links, FIFOs and devices")
struct OutputPathTests {
  /// What `repair` writes for the Network.framework fixture, from standard output.
  static func converted() throws -> Data {
    let (status, captured) = run([
      "repair", resumeFixturePath("network-framework.blob"), "--target", "ios13+", "-o", "-",
    ])
    try #require(status == .success)
    return captured.standardOutput
  }

  @Test("Where a path leads: links followed (at most 40), kinds told apart")
  func resolve() throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let manager = FileManager.default
    try manager.createDirectory(atPath: scratch.path("a"), withIntermediateDirectories: false)
    try manager.createDirectory(atPath: scratch.path("b"), withIntermediateDirectories: false)
    _ = try scratch.write(Data("x".utf8), to: "b/file")
    try manager.createSymbolicLink(atPath: scratch.path("a/link"), withDestinationPath: "../b/file")
    try manager.createSymbolicLink(
      atPath: scratch.path("absolute"), withDestinationPath: scratch.path("b/file"))
    try manager.createSymbolicLink(atPath: scratch.path("dangling"), withDestinationPath: "new")
    try manager.createSymbolicLink(atPath: scratch.path("loop1"), withDestinationPath: "loop2")
    try manager.createSymbolicLink(atPath: scratch.path("loop2"), withDestinationPath: "loop1")
    try #require(mkfifo(scratch.path("fifo"), 0o600) == 0)
    // A chain of 40 links ends at the file; one more is one too many.
    for index in 1...41 {
      try manager.createSymbolicLink(
        atPath: scratch.path("chain\(index)"),
        withDestinationPath: index == 1 ? "b/file" : "chain\(index - 1)")
    }

    let cases: [(String, Result<OutputTarget, OutputTargetError>)] = [
      (scratch.path("b/file"), .success(.file(path: scratch.path("b/file")))),
      (scratch.path("missing"), .success(.file(path: scratch.path("missing")))),
      (scratch.path("a/link"), .success(.file(path: scratch.path("a") + "/../b/file"))),
      (scratch.path("absolute"), .success(.file(path: scratch.path("b/file")))),
      (scratch.path("dangling"), .success(.file(path: scratch.path("new")))),
      (scratch.path("chain40"), .success(.file(path: scratch.path("b/file")))),
      (scratch.path("fifo"), .success(.stream(path: scratch.path("fifo")))),
      ("/dev/null", .success(.stream(path: "/dev/null"))),
      // A pipe, a terminal or a file: whichever, it is written through its descriptor's link.
      ("/dev/stdout", .success(.stream(path: "/dev/stdout"))),
      (scratch.path("b"), .failure(OutputTargetError("is a directory"))),
      (scratch.path("loop1"), .failure(OutputTargetError("Too many levels of symbolic links"))),
      (scratch.path("chain41"), .failure(OutputTargetError("Too many levels of symbolic links"))),
    ]
    for (path, expected) in cases {
      #expect(OutputTarget.resolve(path) == expected, "\(path)")
    }
  }

  @Test("-o through a link replaces the file it names, keeps its mode, and leaves the link")
  func throughLink() throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let target = try scratch.write(Data("old".utf8), to: "target.archive")
    try #require(chmod(target, 0o640) == 0)
    try FileManager.default.createSymbolicLink(
      atPath: scratch.path("link"), withDestinationPath: "target.archive")

    let (status, captured) = run([
      "repair", resumeFixturePath("network-framework.blob"), "--target", "ios13+", "-o",
      scratch.path("link"),
    ])
    #expect(status == .success, "\(captured.standardError)")
    #expect(kind(scratch.path("link")) == S_IFLNK)
    #expect(
      try FileManager.default.destinationOfSymbolicLink(atPath: scratch.path("link"))
        == "target.archive")
    #expect(try contents(target) == (try Self.converted()))
    #expect(permissions(target) == 0o640)
    // No temporary file is left beside it.
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).sorted()
        == ["link", "target.archive"])
  }

  @Test("-o into a FIFO writes into it, and it stays a FIFO")
  func intoFIFO() throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let fifo = scratch.path("fifo")
    try #require(mkfifo(fifo, 0o600) == 0)
    let reader = FIFOReader(fifo)
    let (status, captured) = run([
      "repair", resumeFixturePath("network-framework.blob"), "--target", "ios13+", "-o", fifo,
    ])
    #expect(status == .success, "\(captured.standardError)")
    #expect(reader.wait() == (try Self.converted()))
    #expect(kind(fifo) == S_IFIFO)
  }

  @Test(
    "-o to what cannot take a file: exit 1, nothing written",
    arguments: [
      ("dir", "cannot write: is a directory"),
      ("loop", "cannot write: Too many levels of symbolic links"),
    ])
  func refused(name: String, message: String) throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    try FileManager.default.createDirectory(
      atPath: scratch.path("dir"), withIntermediateDirectories: false)
    try FileManager.default.createSymbolicLink(
      atPath: scratch.path("loop"), withDestinationPath: "loop")
    let path = scratch.path(name)
    let (status, captured) = run([
      "repair", resumeFixturePath("network-framework.blob"), "--target", "ios13+", "-o", path,
    ])
    #expect(status == .failure)
    #expect(captured.standardError.hasSuffix("Error: \(path): \(message)\n"))
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).sorted()
        == ["dir", "loop"])
  }

  @Test(
    "--in-place --backup through a link: the file it names is repaired, the backup the original")
  func inPlaceThroughLink() throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let original = try resumeFixture("v4-byte-range.xml.plist")
    let target = try scratch.write(original, to: "blob.plist")
    try FileManager.default.createSymbolicLink(
      atPath: scratch.path("link.plist"), withDestinationPath: "blob.plist")
    let expected = run([
      "repair", resumeFixturePath("v4-byte-range.xml.plist"), "--target", "ios11.0-11.2", "-o", "-",
    ]).1.standardOutput
    try #require(expected != original)

    let (status, captured) = run([
      "repair", scratch.path("link.plist"), "--target", "ios11.0-11.2", "--in-place", "--backup",
    ])
    #expect(status == .success, "\(captured.standardError)")
    #expect(kind(scratch.path("link.plist")) == S_IFLNK)
    #expect(try contents(target) == expected)
    // A link to the link would now show the repaired bytes.
    #expect(kind(scratch.path("link.plist.bak")) == S_IFREG)
    #expect(try contents(scratch.path("link.plist.bak")) == original)
  }

  @Test("--in-place on a FIFO: refused unread (exit 66), not waited on")
  func inPlaceFIFO() throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let fifo = scratch.path("fifo")
    try #require(mkfifo(fifo, 0o600) == 0)
    // Were the FIFO read, this writer would end it empty, and the error would be another.
    let writer = Thread {
      let descriptor = open(fifo, O_WRONLY | O_CLOEXEC)
      if descriptor >= 0 { close(descriptor) }
    }
    writer.start()
    let (status, captured) = run(["repair", fifo, "--target", "ios13+", "--in-place"])
    // Lets the writer's open return if nothing read.
    let unblock = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
    defer { if unblock >= 0 { close(unblock) } }
    #expect(status == .unreadableInput)
    #expect(text(captured.standardOutput) == "\(fifo): unreadable: not a regular file\n")
    #expect(kind(fifo) == S_IFIFO)
  }

  @Test("A failed write to standard output: exit 1 and why, not a crash")
  func standardOutputFull() throws {
    let (status, error) = try runRedirected(
      ["inspect", resumeFixturePath("keyed-v5-response.archive")],
      output: try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/full")))
    #expect(status == 1)
    #expect(
      error
        == "Error: -: cannot write standard output: No space left on device\n")
  }

  @Test(
    "-o /dev/stdout with standard output a file: the blob alone in it, the findings on standard error"
  )
  func devStdout() throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    // /dev/stdout's own link, made here: were it replaced, the machine's would not be.
    let link = scratch.path("stdout")
    try FileManager.default.createSymbolicLink(
      atPath: link, withDestinationPath: "/proc/self/fd/1")
    // What was in the file before the shell's `>` truncated it, and longer than the blob.
    let file = try scratch.write(Data(repeating: 0x2E, count: 10_000), to: "out.archive")
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: file))
    try handle.truncate(atOffset: 0)
    let (status, error) = try runRedirected(
      ["repair", resumeFixturePath("network-framework.blob"), "--target", "ios13+", "-o", link],
      output: handle)
    try handle.close()
    #expect(status == 0)
    #expect(try contents(file) == (try Self.converted()))
    #expect(error.hasPrefix("info convert-for-target: "))
    #expect(kind(link) == S_IFLNK)
  }

  @Test(
    "download -o through a link and into a FIFO; a directory, or a missing one, refused before any request"
  )
  func download() throws {
    let payload = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 7) })
    let server = try TestHTTPServer()
    defer { server.stop() }
    server.serve(path: "/d.bin", body: payload, etag: "\"d1\"")
    let url = server.baseURL.appendingPathComponent("d.bin").absoluteString
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    try FileManager.default.createSymbolicLink(
      atPath: scratch.path("link.bin"), withDestinationPath: "file.bin")

    let linked = try runExecutable([
      "download", url, "-o", scratch.path("link.bin"), "--state-dir", scratch.path("state"),
    ])
    #expect(linked.0 == 0, "\(linked.2)")
    #expect(kind(scratch.path("link.bin")) == S_IFLNK)
    #expect(firstDifference(try contents(scratch.path("file.bin")), payload) == nil)

    let fifo = scratch.path("fifo")
    try #require(mkfifo(fifo, 0o600) == 0)
    let reader = FIFOReader(fifo)
    let streamed = try runExecutable([
      "download", url, "-o", fifo, "--state-dir", scratch.path("state"),
    ])
    #expect(streamed.0 == 0, "\(streamed.2)")
    let received = try #require(reader.wait())
    #expect(firstDifference(received, payload) == nil)
    #expect(kind(fifo) == S_IFIFO)

    // To standard output (through /dev/stdout's own link, made here): the file alone there, and
    // the line that names it on standard error.
    try FileManager.default.createSymbolicLink(
      atPath: scratch.path("stdout"), withDestinationPath: "/proc/self/fd/1")
    let piped = try runExecutable([
      "download", url, "-o", scratch.path("stdout"), "--state-dir", scratch.path("state"),
    ])
    #expect(piped.0 == 0, "\(piped.2)")
    #expect(firstDifference(piped.1, payload) == nil)
    #expect(piped.2.hasPrefix(scratch.path("stdout") + "  sha256 "))

    // A directory can take no file: refused before anything is fetched.
    let requests = server.requests(path: "/d.bin").count
    try FileManager.default.createDirectory(
      atPath: scratch.path("dir"), withIntermediateDirectories: false)
    let refused = try runExecutable(["download", url, "-o", scratch.path("dir")])
    #expect(refused.0 == 1)
    #expect(refused.2 == "Error: \(scratch.path("dir")): cannot write: is a directory\n")
    #expect(server.requests(path: "/d.bin").count == requests)

    // A file whose directory is not there (named, or where a link leads): refused before
    // anything is fetched, as curl and wget refuse it, and no directory made, neither for the
    // file nor for the state kept beside it or in --state-dir.
    try FileManager.default.createSymbolicLink(
      atPath: scratch.path("dangling.bin"), withDestinationPath: "gone/file.bin")
    let missing = [
      (scratch.path("missing/sub/file.bin"), scratch.path("missing/sub")),
      (scratch.path("dangling.bin"), scratch.path("gone")),
    ]
    for (output, directory) in missing {
      for extra in [[], ["--state-dir", scratch.path("made")]] {
        let refused = try runExecutable(["download", url, "-o", output] + extra)
        #expect(refused.0 == 1)
        #expect(
          refused.2
            == "Error: \(output): cannot write: \(directory): no such directory "
            + "(downloads make no directories for -o)\n")
      }
      let added = try runExecutable([
        "downloads", "add", url, "-o", output, "--state-dir", scratch.path("tasks"),
      ])
      #expect(added.0 == 1)
      #expect(added.2.hasSuffix(": no such directory (downloads make no directories for -o)\n"))
    }
    for made in ["missing", "gone", "made"] {
      #expect(!FileManager.default.fileExists(atPath: scratch.path(made)), "\(made)")
    }
    let listed = try runExecutable(["downloads", "list", "--state-dir", scratch.path("tasks")])
    #expect(String(decoding: listed.1, as: UTF8.self) == "no downloads\n")
    #expect(server.requests(path: "/d.bin").count == requests)
  }
}

/// Standard input that cannot be read is an error that says why, not a crash.
@Suite("Standard input that cannot be read")
struct UnreadableInputTests {
  @Test(
    "A directory for standard input: exit 66 and the reason",
    arguments: [
      (["inspect", "-"], "Error: -: cannot read standard input: Is a directory\n"),
      (["batch"], "Error: -: cannot read: Is a directory\n"),
    ])
  func directory(arguments: [String], message: String) throws {
    let (status, error) = try runRedirected(
      arguments, output: FileHandle.nullDevice,
      input: try FileHandle(forReadingFrom: URL(fileURLWithPath: "/")))
    #expect(status == 66)
    #expect(error == message)
  }
}

/// `batch`'s result lines go to standard output as the pieces of memory they lie in, with `writev`.
@Suite("Pieces written to a descriptor")
struct PiecesWrittenTests {
  /// 3,000 pieces of 0 to 12 bytes (more than one `writev` takes), each byte its piece's number
  /// modulo 251.
  static let texts: [[UInt8]] = (0..<3_000).map {
    [UInt8](repeating: UInt8($0 % 251), count: $0 % 13)
  }

  /// Writes `texts` through `writeVectors` and returns the `errno` and the bytes it took.
  static func write(
    _ writeVectors: (UnsafePointer<iovec>, Int32, inout [UInt8]) -> Int
  ) -> (Int32, [UInt8]) {
    var written: [UInt8] = []
    let blocks = texts.map { text in
      let block = UnsafeMutableRawBufferPointer.allocate(byteCount: text.count, alignment: 1)
      block.copyBytes(from: text)
      return block
    }
    defer { for block in blocks { block.deallocate() } }
    let failure = OutputTarget.writeAll(-1, pieces: blocks.map { UnsafeRawBufferPointer($0) }) {
      descriptor, vectors, count in
      #expect(descriptor == -1)
      #expect((1...1_024).contains(count))
      return writeVectors(vectors, count, &written)
    }
    return (failure, written)
  }

  @Test(
    "Short and interrupted writes go on where they stopped, in order, whatever each takes",
    arguments: [1, 5, 64, 100_000])
  func shortWrites(most: Int) {
    var calls = 0
    let (failure, written) = Self.write { vectors, count, written in
      calls += 1
      if calls % 3 == 0 {
        errno = EINTR
        return -1
      }
      var taken = 0
      for index in 0..<Int(count) where taken < most {
        let piece = UnsafeRawBufferPointer(
          start: vectors[index].iov_base, count: vectors[index].iov_len)
        #expect(!piece.isEmpty)
        let part = piece.prefix(most - taken)
        written += part
        taken += part.count
      }
      return taken
    }
    #expect(failure == 0)
    #expect(written == Self.texts.flatMap { $0 })
  }

  @Test("A write that fails ends it with its errno, after what was written")
  func failure() {
    var calls = 0
    let (failure, written) = Self.write { vectors, count, written in
      calls += 1
      guard calls == 1 else {
        errno = ENOSPC
        return -1
      }
      let piece = UnsafeRawBufferPointer(start: vectors[0].iov_base, count: vectors[0].iov_len)
      written += piece
      return piece.count
    }
    #expect(failure == ENOSPC)
    #expect(written == Self.texts[1])
  }

  @Test("Through a pipe, with the system's writev: every piece, in order")
  func pipe() async throws {
    let pipe = Pipe()
    // 2,000 lines, the pieces of them that `batch` would hand over: one line or several.
    let text = Data((0..<2_000).map { "line \($0)\n" }.joined().utf8)
    var ends =
      [0] + text.indices.filter { text[$0] == UInt8(ascii: "\n") && $0 % 3 != 0 }.map { $0 + 1 }
    if ends.last != text.count { ends.append(text.count) }
    let reader = Task.detached { pipe.fileHandleForReading.readDataToEndOfFile() }
    let failure = text.withUnsafeBytes { bytes in
      let pieces = zip(ends, ends.dropFirst()).map {
        UnsafeRawBufferPointer(rebasing: bytes[$0..<$1])
      }
      return OutputTarget.writeAll(pipe.fileHandleForWriting.fileDescriptor, pieces: pieces)
    }
    try pipe.fileHandleForWriting.close()
    #expect(failure == 0)
    #expect(await reader.value == text)
  }
}

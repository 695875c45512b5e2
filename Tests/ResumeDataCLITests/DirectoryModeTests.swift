import Foundation
import ResumeData
import ResumeDataCLI
import Testing

/// `validate DIR` and `repair DIR --in-place`: recursion, summaries, atomic replacement.
@Suite("resumedata validate and repair over directories")
struct DirectoryModeTests {
  /// A tree with a repairable, an untouched, a refused and a malformed blob, plus what a walk must
  /// skip: a hidden file, a backup, and a link back to the top.
  static func tree() throws -> ScratchDirectory {
    let scratch = try ScratchDirectory()
    let manager = FileManager.default
    try manager.createDirectory(
      atPath: scratch.path("sub/deeper"), withIntermediateDirectories: true)
    _ = try scratch.write(try resumeFixture("v4-byte-range.xml.plist"), to: "a.plist")
    _ = try scratch.write(try resumeFixture("v2.xml.plist"), to: "sub/b.plist")
    _ = try scratch.write(try emptyKeyedBlob(), to: "sub/deeper/c.archive")
    _ = try scratch.write(try truncatedBlob(), to: "trunc.plist")
    _ = try scratch.write(Data("not a blob".utf8), to: ".hidden")
    _ = try scratch.write(Data("not a blob".utf8), to: "old.plist.bak")
    try manager.createSymbolicLink(
      atPath: scratch.path("sub/loop"), withDestinationPath: scratch.url.path)
    return scratch
  }

  @Test("validate DIR checks every blob under it, in name order, then sums them up")
  func validate() throws {
    let scratch = try Self.tree()
    defer { scratch.remove() }
    let (status, captured) = run(["validate", scratch.url.path])
    #expect(status == .malformedInput)
    #expect(captured.standardError == "")
    let root = scratch.url.path
    #expect(
      text(captured.standardOutput) == """
        \(root)/a.plist: ok (v4)
          warning byte-range-present: NSURLSessionResumeByteRange is set: iOS 11.0–11.2 then completes with a short or empty file (repair for it removes the key) (NSURLSessionResumeByteRange)
        \(root)/sub/b.plist: ok (v2)
        \(root)/sub/deeper/c.archive: not resumable: empty-blob: the blob records no received bytes (the iOS 12.0–12.2 cancel-before-first-byte case): start the download over
          error no-validator: neither an ETag nor a Last-Modified date was recorded: the server cannot confirm the file is unchanged (NSURLSessionResumeEntityTag)
          warning original-request-missing: there is no original request: iOS 10.3–12.1 then gives the task a nil originalRequest (repair for them copies the current request) (NSURLSessionResumeOriginalRequest)
        \(root)/trunc.plist: malformed: @974: trailer offset size 101 is not 1 to 8 bytes (no trailer in the last 32 bytes: a file cut short?)
        2 errors, 2 warnings in 2 of 4 files
        summary: 4 files: 2 ok, 1 not-resumable, 1 malformed, 0 unreadable
          generations: keyed 1, v2 1, v4 1
          findings: byte-range-present 1, empty-blob 1, ios10-request-layout 1, no-validator 1, original-request-missing 1

        """)
  }

  @Test("repair DIR --in-place --backup repairs what needs it and leaves the rest alone")
  func repair() throws {
    let scratch = try Self.tree()
    defer { scratch.remove() }
    let root = scratch.url.path
    let (status, captured) = run([
      "repair", root, "--target", "ios11.0-11.2", "--in-place", "--backup",
    ])
    #expect(status == .malformedInput)
    #expect(
      text(captured.standardOutput) == """
        \(root)/a.plist: repaired: remove-byte-range
        \(root)/sub/b.plist: unchanged
        \(root)/sub/deeper/c.archive: refused: refuse-empty-blob: the blob is 362 bytes, too small to hold a request (the iOS 12.0–12.2 cancel-before-first-byte case): start the download over; no repaired blob is written
        \(root)/trunc.plist: malformed: @974: trailer offset size 101 is not 1 to 8 bytes (no trailer in the last 32 bytes: a file cut short?)
        summary: 4 files: 1 repaired, 1 unchanged, 1 refused, 0 failed, 1 malformed, 0 unreadable
          generations: keyed 1, v2 1, v4 1
          changes: remove-byte-range 1

        """)
    let (_, direct) = run([
      "repair", resumeFixturePath("v4-byte-range.xml.plist"), "--target", "ios11.0-11.2", "-o", "-",
    ])
    #expect(
      try Data(contentsOf: URL(fileURLWithPath: scratch.path("a.plist"))) == direct.standardOutput)
    #expect(
      try Data(contentsOf: URL(fileURLWithPath: scratch.path("a.plist.bak")))
        == resumeFixture("v4-byte-range.xml.plist"))
    #expect(
      try Data(contentsOf: URL(fileURLWithPath: scratch.path("sub/b.plist")))
        == resumeFixture("v2.xml.plist"))
    #expect(!FileManager.default.fileExists(atPath: scratch.path("sub/b.plist.bak")))
    #expect(
      try Data(contentsOf: URL(fileURLWithPath: scratch.path("sub/deeper/c.archive")))
        == emptyKeyedBlob())
    // A second run finds nothing left to repair, and keeps the backup it made.
    let (again, second) = run([
      "repair", root, "--target", "ios11.0-11.2", "--in-place", "--backup",
    ])
    #expect(again == .malformedInput)
    #expect(text(second.standardOutput).hasPrefix("\(root)/a.plist: unchanged\n"))
  }

  @Test(
    "Usage errors of --in-place",
    arguments: [
      (
        ["repair", "x", "--target", "ios13+", "--in-place", "-o", "y"],
        "give -o OUT or --in-place, not both"
      ),
      (
        ["repair", "-", "--target", "ios13+", "--in-place"],
        "repair --in-place cannot write back to standard input"
      ),
      (["repair", "--target", "ios13+", "--in-place"], "repair --in-place needs a FILE or DIR"),
      (
        ["repair", "x", "--target", "ios13+", "--backup", "-o", "y"],
        "--backup goes with --in-place"
      ),
    ])
  func usage(arguments: [String], message: String) {
    let (status, captured) = run(arguments)
    #expect(status == .usage)
    #expect(
      captured.standardError == "Error: \(message)\nRun 'resumedata repair --help' for usage.\n")
  }

  @Test(
    "Killed at any point, an in-place repair leaves each file original or repaired; a rerun finishes"
  )
  func killed() throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let original = try resumeFixture("v4-byte-range.xml.plist")
    let (_, direct) = run([
      "repair", resumeFixturePath("v4-byte-range.xml.plist"), "--target", "ios11.0-11.2", "-o", "-",
    ])
    let repaired = direct.standardOutput
    let count = 1_000
    let names = (0..<count).map { String(format: "blob-%04d.plist", $0) }
    for name in names { _ = try scratch.write(original, to: name) }
    for stopAfter in [1, 40, 150] {
      let process = Process()
      process.executableURL = executable
      process.arguments = [
        "repair", scratch.url.path, "--target", "ios11.0-11.2", "--in-place", "--backup",
      ]
      process.standardOutput = FileHandle.nullDevice
      try process.run()
      // Waits (boundedly) until the run has backed up `stopAfter` more files, then kills it.
      let deadline = Date().addingTimeInterval(30)
      while process.isRunning, Date() < deadline {
        let backups = try FileManager.default.contentsOfDirectory(atPath: scratch.url.path)
          .filter { $0.hasSuffix(".bak") }.count
        if backups >= stopAfter { break }
        usleep(200)
      }
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
      // The run was stopped part way, not after it had finished.
      #expect(process.terminationReason == .uncaughtSignal, "kill at \(stopAfter)")
      for name in names {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: scratch.path(name)))
        #expect(bytes == original || bytes == repaired, "\(name) after a kill at \(stopAfter)")
        if FileManager.default.fileExists(atPath: scratch.path(name + ".bak")) {
          #expect(
            try Data(contentsOf: URL(fileURLWithPath: scratch.path(name + ".bak"))) == original)
        }
      }
    }
    let (status, _) = run([
      "repair", scratch.url.path, "--target", "ios11.0-11.2", "--in-place", "--backup",
    ])
    #expect(status == .success)
    for name in names {
      #expect(try Data(contentsOf: URL(fileURLWithPath: scratch.path(name))) == repaired, "\(name)")
      #expect(try Data(contentsOf: URL(fileURLWithPath: scratch.path(name + ".bak"))) == original)
    }
  }
}

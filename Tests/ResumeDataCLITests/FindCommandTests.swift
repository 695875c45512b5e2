import Foundation
import ResumeDataCLI
import TestSupport
import Testing

@Suite("resumedata find")
struct FindCommandTests {
  /// A container in a scratch directory: a blob with its partial file, and what `find` must
  /// bound or refuse.
  func container(_ scratch: ScratchDirectory) throws -> String {
    let app = scratch.path("AppData")
    let manager = FileManager.default
    for directory in ["tmp", "Library/Caches", "Documents"] {
      try manager.createDirectory(
        atPath: app + "/" + directory, withIntermediateDirectories: true)
    }
    try fixture("resume/v2.xml.plist").write(
      to: URL(fileURLWithPath: app + "/Library/Caches/a.resumedata"))
    try Data(count: 1_048_576).write(
      to: URL(fileURLWithPath: app + "/tmp/CFNetworkDownload_a1b2c3.tmp"))
    return app
  }

  func relative(_ captured: Captured, _ scratch: ScratchDirectory) -> String {
    text(captured.standardOutput).replacingOccurrences(of: scratch.url.path + "/", with: "")
  }

  @Test("A resumable blob beside its whole partial file exits 0")
  func resumable() throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let app = try container(scratch)
    let (status, captured) = run(["find", app])
    #expect(status == .success)
    #expect(
      relative(captured, scratch) == """
        AppData/Library/Caches/a.resumedata: v2 https://example.com/files/archive.zip, 1048576 bytes, partial file tmp/CFNetworkDownload_a1b2c3.tmp (1048576 bytes): resumable
        1 blob (1 resumable, 0 not, 0 malformed), 0 orphaned partial files (0 bytes), 0 unreadable, in 2 files

        """)
  }

  @Test("Links are not followed, large files are skipped, the walk stops at --max-files")
  func bounds() throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let app = try container(scratch)
    let manager = FileManager.default
    try manager.createSymbolicLink(atPath: app + "/Documents/out", withDestinationPath: "/etc")
    try manager.createSymbolicLink(
      atPath: app + "/Documents/blob-link",
      withDestinationPath: app + "/Library/Caches/a.resumedata")
    try Data(count: 100_000).write(to: URL(fileURLWithPath: app + "/Documents/big.bin"))
    let (status, captured) = run(["find", app, "--json", "--max-file-size", "50000"])
    #expect(status == .success)
    let output = relative(captured, scratch)
    #expect(
      output.contains(
        """
          "skipped": [
            {
              "file": "AppData/Documents/big.bin",
              "reason": "larger than 50000 bytes"
            },
            {
              "file": "AppData/Documents/blob-link",
              "reason": "a symbolic link (not followed)"
            },
            {
              "file": "AppData/Documents/out",
              "reason": "a symbolic link (not followed)"
            }
          ],
        """))
    #expect(output.contains("\"filesLookedAt\": 3,\n  \"stopped\": false\n}"))
    let (stopped, stoppedOutput) = run(["find", app, "--max-files", "1"])
    #expect(stopped == .success)
    #expect(
      relative(stoppedOutput, scratch)
        == "0 blobs (0 resumable, 0 not, 0 malformed), 0 orphaned partial files (0 bytes), 0 unreadable, in 1 file; stopped at --max-files, the rest not looked at\n"
    )
  }

  @Test("A malformed blob exits 65, a missing partial file 1, an orphan nothing")
  func statuses() throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let app = try container(scratch)
    try fixture("resume/truncated/binary-plist.plist").write(
      to: URL(fileURLWithPath: app + "/Documents/cut.resumedata"))
    try fixture("captured/keyed-v5-response.ios13-elided.txt").write(
      to: URL(fileURLWithPath: app + "/Documents/log.txt"))
    try Data(count: 8).write(to: URL(fileURLWithPath: app + "/tmp/CFNetworkDownload_zz.tmp"))
    try FileManager.default.removeItem(atPath: app + "/tmp/CFNetworkDownload_a1b2c3.tmp")
    let (status, captured) = run(["find", app])
    #expect(status == .malformedInput)
    #expect(
      relative(captured, scratch) == """
        AppData/Documents/cut.resumedata: malformed: @969: trailer offset size 115 is not 1 to 8 bytes (no trailer in the last 32 bytes: a file cut short?)
        AppData/Documents/log.txt: malformed: 1:81: the description iOS 13 and later print of Data ("{length = 4641, bytes = 0x… … }"), which shows only the first 24 and the last 8 bytes: the blob cannot be recovered from it; capture the blob itself: resumeData.base64EncodedString(), or resumeData.write(to:) (in the debugger: po resumeData.base64EncodedString())
        AppData/Library/Caches/a.resumedata: v2 https://example.com/files/archive.zip, 1048576 bytes, partial file missing (tmp/CFNetworkDownload_a1b2c3.tmp): not resumable: partial-file-missing: the partial file CFNetworkDownload_a1b2c3.tmp is not in AppData/tmp
        orphan: AppData/tmp/CFNetworkDownload_zz.tmp (8 bytes): no blob names it
        3 blobs (0 resumable, 1 not, 2 malformed), 1 orphaned partial file (8 bytes), 0 unreadable, in 4 files

        """)
  }

  @Test("Base64 of a blob inside a database is found at its byte offset")
  func database() throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let app = try container(scratch)
    var database = Data("SQLite format 3\u{0}".utf8) + Data(count: 84)
    database += Data(try fixture("resume/keyed-v4.archive").base64EncodedString().utf8)
    database += Data([0, 0, 1, 2])
    try database.write(to: URL(fileURLWithPath: app + "/Documents/store.sqlite"))
    let (status, captured) = run(["find", app + "/Documents"])
    #expect(status == .failure)
    #expect(
      relative(captured, scratch).hasPrefix(
        "AppData/Documents/store.sqlite@100 (base64): keyed https://example.com/files/archive.zip, 1048576 bytes, partial file missing (tmp/CFNetworkDownload_j1k2l3.tmp): not resumable: partial-file-missing: "
      ))
  }

  @Test("An unreadable directory is reported and the walk goes on (66)")
  func unreadable() throws {
    // Root reads every file whatever its mode: nothing to see then.
    guard geteuid() != 0 else { return }
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let app = try container(scratch)
    let closed = app + "/Documents"
    chmod(closed, 0)
    defer { chmod(closed, 0o755) }
    let (status, captured) = run(["find", app])
    #expect(status == .unreadableInput)
    #expect(
      relative(captured, scratch).contains(
        "AppData/Documents: unreadable: cannot list the directory\n"))
  }

  @Test("Usage errors")
  func usage() {
    #expect(run(["find"]).0 == .usage)
    #expect(run(["find", "-"]).0 == .usage)
    let (status, captured) = run(["find", ".", "--max-files", "0"])
    #expect(status == .usage)
    #expect(
      captured.standardError
        == "Error: --max-files must be a whole number above 0, not '0'\nRun 'resumedata find --help' for usage.\n"
    )
  }
}

import Foundation
import TestSupport
import Testing

/// The commands each resume fixture is put through, as a user would type them (`FILE` and `OUT`
/// stand for the fixture and a scratch output file).
let snapshotCommands: [[String]] = [
  ["inspect", "FILE"],
  ["inspect", "FILE", "--json"],
  ["validate", "FILE", "--target", "ios13+"],
  ["repair", "FILE", "--target", "ios11.0-11.2", "-o", "OUT"],
  ["repair", "FILE", "--target", "ios10.0-10.1", "-o", "OUT", "--json"],
  ["convert", "FILE", "--to", "v2", "--temp-dir", "/tmp/partials", "-o", "OUT"],
  ["convert", "FILE", "--to", "keyed", "-o", "OUT"],
  [
    "edit", "FILE", "--url", "https://mirror.example.net/a.zip", "--header", "X-Token: t", "-o",
    "OUT",
  ],
  ["plist", "FILE", "--to", "json"],
  ["archive", "FILE"],
]

/// Every blob under Fixtures/resume (truncated ones included), as a path relative to the repository.
let snapshotFixtures = fixturesRecursively("resume").map { "Fixtures/" + $0 }

/// An argument as a shell would need it quoted.
func shellQuoted(_ argument: String) -> String {
  argument.contains(where: { " '\"$*?;&|<>()".contains($0) })
    ? "'" + argument.replacingOccurrences(of: "'", with: "'\\''") + "'" : argument
}

/// Runs the built executable in the repository folder, so that paths in its output are relative;
/// its output and error go to files in `scratch` (no pipe can fill and stall it).
func runInRepository(_ arguments: [String], scratch: URL) throws -> (Int32, String, String) {
  let outputFile = scratch.appendingPathComponent("stdout")
  let errorFile = scratch.appendingPathComponent("stderr")
  for file in [outputFile, errorFile] {
    _ = FileManager.default.createFile(atPath: file.path, contents: nil)
  }
  let stdout = try FileHandle(forWritingTo: outputFile)
  let stderr = try FileHandle(forWritingTo: errorFile)
  defer {
    try? stdout.close()
    try? stderr.close()
  }
  let process = Process()
  process.executableURL = executable
  process.arguments = arguments
  process.currentDirectoryURL = repositoryRoot
  process.standardInput = FileHandle.nullDevice
  process.standardOutput = stdout
  process.standardError = stderr
  try process.run()
  process.waitUntilExit()
  return (
    process.terminationStatus, try String(contentsOf: outputFile, encoding: .utf8),
    try String(contentsOf: errorFile, encoding: .utf8)
  )
}

/// Runs every snapshot command on the built binary and compares the transcript with the snapshot
/// file (`Tests/ResumeDataCLITests/Snapshots/`); `REGENERATE_SNAPSHOTS=1` writes them again.
@Suite("resumedata snapshots")
struct SnapshotTests {
  @Test(
    "Each subcommand on each resume fixture: exact output and exit status",
    arguments: snapshotFixtures)
  func fixture(_ path: String) throws {
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
      "resumedata-snapshot-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: scratch) }
    var transcript = ""
    for command in snapshotCommands {
      let output = scratch.appendingPathComponent("out").path
      let arguments = command.map { $0 == "FILE" ? path : $0 == "OUT" ? output : $0 }
      let (status, stdout, stderr) = try runInRepository(arguments, scratch: scratch)
      transcript += "$ resumedata " + command.map(shellQuoted).joined(separator: " ") + "\n"
      transcript += "status: \(status)\n"
      if !stdout.isEmpty {
        transcript += "--- stdout\n" + stdout.replacingOccurrences(of: output, with: "OUT")
      }
      if !stderr.isEmpty {
        transcript += "--- stderr\n" + stderr.replacingOccurrences(of: output, with: "OUT")
      }
      if FileManager.default.fileExists(atPath: output) {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: output))
        transcript += "--- OUT: \(bytes.count) bytes\n"
        try FileManager.default.removeItem(atPath: output)
      }
      transcript += "\n"
    }
    let name = path.replacingOccurrences(of: "Fixtures/resume/", with: "")
      .replacingOccurrences(of: "/", with: "--")
    try Self.compare(transcript, withSnapshot: name)
  }

  /// Commands over all the fixtures at once: a directory and an NDJSON stream of them.
  @Test("validate over the fixture directory, and batch over every fixture")
  func allFixtures() throws {
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
      "resumedata-snapshot-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: scratch) }
    let input = scratch.appendingPathComponent("fixtures.ndjson")
    let records = snapshotFixtures.map { "{\"id\":\"\($0)\",\"path\":\"\($0)\"}\n" }
    try Data(records.joined().utf8).write(to: input)
    var transcript = ""
    for command in [
      ["validate", "Fixtures/resume"],
      ["validate", "Fixtures/resume", "--target", "ios11.0-11.2", "--json"],
      ["batch", "NDJSON"],
      ["batch", "NDJSON", "--target", "ios13+", "--jobs", "2"],
      ["batch", "NDJSON", "--to", "v4"],
    ] {
      let arguments = command.map { $0 == "NDJSON" ? input.path : $0 }
      let (status, stdout, stderr) = try runInRepository(arguments, scratch: scratch)
      transcript += "$ resumedata " + command.map(shellQuoted).joined(separator: " ") + "\n"
      transcript += "status: \(status)\n"
      if !stdout.isEmpty {
        transcript += "--- stdout\n" + stdout.replacingOccurrences(of: input.path, with: "NDJSON")
      }
      if !stderr.isEmpty { transcript += "--- stderr\n" + stderr }
      transcript += "\n"
    }
    try Self.compare(transcript, withSnapshot: "all-fixtures")
  }

  /// Compares a transcript with `Snapshots/NAME.txt`, first writing it there when
  /// `REGENERATE_SNAPSHOTS=1`.
  static func compare(_ transcript: String, withSnapshot name: String) throws {
    let snapshot = repositoryRoot.appendingPathComponent(
      "Tests/ResumeDataCLITests/Snapshots/\(name).txt")
    if ProcessInfo.processInfo.environment["REGENERATE_SNAPSHOTS"] == "1" {
      try FileManager.default.createDirectory(
        at: snapshot.deletingLastPathComponent(), withIntermediateDirectories: true)
      try Data(transcript.utf8).write(to: snapshot)
    }
    #expect(transcript == (try String(contentsOf: snapshot, encoding: .utf8)))
  }
}

import Foundation
import ResumeData
import TestHTTPServer
import TestSupport
import Testing

/// 300 KB of a repeatable pattern, and its SHA-256.
private let payload = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) })

/// A scratch directory for one test.
private func scratchDirectory() throws -> URL {
  let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
    "resumedata-download-\(UUID().uuidString)")
  try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  return directory
}

/// A scratch directory for one test, and a state directory made inside it.
private func stateDirectory() throws -> (scratch: URL, state: URL) {
  let directory = try scratchDirectory()
  let state = directory.appendingPathComponent("state")
  try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
  return (directory, state)
}

@Suite("resumedata download, resume, downloads")
struct DownloadCommandTests {
  @Test("download: the file, its digest on standard output, exit 0; --sha256 checks it")
  func download() throws {
    let server = try TestHTTPServer()
    defer { server.stop() }
    server.serve(path: "/p.bin", body: payload, etag: "\"p1\"")
    let directory = try scratchDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let output = directory.appendingPathComponent("p.bin").path
    let url = server.baseURL.appendingPathComponent("p.bin").absoluteString
    let (status, stdout, _) = try runExecutable(["download", url, "-o", output])
    #expect(status == 0)
    let digest = "5d4c4d52a4a3b0a0a9c1ba8b4fbbb2a9a0d7e1a1f1e2c6b6a3f2d5b3e5b8f0a1"
    let actual = String(decoding: stdout, as: UTF8.self)
    #expect(actual.hasPrefix("\(output)  sha256 "))
    #expect(firstDifference(try Data(contentsOf: URL(fileURLWithPath: output)), payload) == nil)
    #expect(!FileManager.default.fileExists(atPath: output + ".resumedata"))

    let wrong = try runExecutable(["download", url, "-o", output + ".2", "--sha256", digest])
    #expect(wrong.0 == 1)
    #expect(wrong.2.hasPrefix("Error: digest-mismatch: the file's sha256 is "))
    #expect(wrong.2.contains("(resume data: \(output).2.resumedata)"))
    #expect(!FileManager.default.fileExists(atPath: output + ".2"))
  }

  @Test(
    "--engine and --ca-cert: an engine or a file that cannot be used is named before any request",
    arguments: [
      (
        ["--engine", "wget"], [String: String](), 64,
        "Error: --engine needs urlsession or curl, not 'wget'"
      ),
      (
        [], ["RESUMEDATA_ENGINE": "wget"], 64,
        "Error: RESUMEDATA_ENGINE needs urlsession or curl, not 'wget'"
      ),
      (
        ["--engine", "urlsession", "--ca-cert", "ca.pem"], [:], 64,
        "Error: --ca-cert: URLSession on this platform cannot trust a certificate authority of one's own; use --engine curl"
      ),
      (
        ["--engine", "curl", "--ca-cert", "missing.pem"], [:], 66,
        "Error: missing.pem: cannot read the certificate authority"
      ),
      (
        ["--engine", "curl", "--ca-cert", "ca.pem"], ["CA_TEXT": "not a certificate"], 65,
        "Error: ca.pem: holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
      ),
    ] as [([String], [String: String], Int32, String)])
  func engineOptions(
    options: [String], environment: [String: String], status: Int32, message: String
  )
    throws
  {
    let server = try TestHTTPServer()
    defer { server.stop() }
    server.serve(path: "/p.bin", body: payload, etag: "\"p1\"")
    let directory = try scratchDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    try Data(
      (environment["CA_TEXT"] ?? "-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n")
        .utf8
    )
    .write(to: directory.appendingPathComponent("ca.pem"))
    let process = Process()
    process.executableURL = executable
    process.currentDirectoryURL = directory
    process.arguments =
      ["download", server.baseURL.appendingPathComponent("p.bin").absoluteString, "-o", "out.bin"]
      + options
    var variables = ProcessInfo.processInfo.environment
    variables["RESUMEDATA_ENGINE"] = environment["RESUMEDATA_ENGINE"]
    process.environment = variables
    let errorPipe = Pipe()
    process.standardError = errorPipe
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    let error = String(
      decoding: errorPipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    #expect(process.terminationStatus == status)
    #expect(error.hasPrefix(message + "\n"))
    #expect(server.requests(path: "/p.bin").isEmpty)
  }

  @Test("resume: continues from a v2 blob and its partial file, unless another download writes it")
  func resume() throws {
    let server = try TestHTTPServer()
    defer { server.stop() }
    server.serve(path: "/p.bin", body: payload, etag: "\"p1\"")
    let directory = try scratchDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    try payload.prefix(120_000).write(
      to: directory.appendingPathComponent("CFNetworkDownload_x.tmp"))
    let blob = try ResumeData(
      building: [
        ResumeDataKey.downloadURL: .string(
          server.baseURL.appendingPathComponent("p.bin").absoluteString),
        ResumeDataKey.bytesReceived: .integer(.init(120_000)),
        ResumeDataKey.entityTag: .string("\"p1\""),
        ResumeDataKey.tempFileName: .string("CFNetworkDownload_x.tmp"),
      ], as: .v2)
    let blobPath = directory.appendingPathComponent("blob.plist").path
    try blob.encoded().write(to: URL(fileURLWithPath: blobPath))
    let output = directory.appendingPathComponent("out.bin").path
    // While another download writes the partial file (this process holds its lock, as a second
    // `resume` of the blob would), it is left alone.
    let partial = directory.appendingPathComponent("CFNetworkDownload_x.tmp").path
    let lock = open(partial, O_RDWR)
    try #require(flock(lock, LOCK_EX | LOCK_NB) == 0)
    let refused = try runExecutable(["resume", blobPath, "-o", output])
    close(lock)
    #expect(refused.0 == 1)
    #expect(
      refused.2
        == "Error: partial-file-in-use: the partial file \(partial) is being written by another "
        + "download; try again once it has ended\n")
    #expect(server.requests.isEmpty)
    #expect(try Data(contentsOf: URL(fileURLWithPath: partial)) == payload.prefix(120_000))
    #expect(!FileManager.default.fileExists(atPath: output + ".resumedata"))
    let (status, _, error) = try runExecutable(["resume", blobPath, "-o", output])
    #expect(status == 0)
    #expect(error.hasPrefix("resuming at byte 120000\n"))
    #expect(firstDifference(try Data(contentsOf: URL(fileURLWithPath: output)), payload) == nil)
    #expect(server.requests(path: "/p.bin").map { $0.header("Range") } == ["bytes=120000-"])
  }

  @Test(
    "Usage errors exit 64 with the reason",
    arguments: [
      (["download"], "Error: download needs one URL"),
      (
        ["download", "http://127.0.0.1:9/x"],
        "Error: -o FILE is required (the download is written to a file)"
      ),
      (
        ["download", "http://127.0.0.1:9/x", "-o", "/tmp/x", "--sha256", "abc"],
        "Error: --sha256 needs 64 hexadecimal digits"
      ),
      (
        ["download", "ftp://127.0.0.1/x", "-o", "/tmp/x"],
        "Error: ftp://127.0.0.1/x is not an http or https URL"
      ),
      (
        ["download", "http://127.0.0.1:9/x", "-o", ""],
        "Error: -o needs a path, not an empty string"
      ),
      (
        ["download", "http://127.0.0.1:9/x", "-o", "/tmp/x", "--temp-dir="],
        "Error: --temp-dir needs a path, not an empty string"
      ),
      (["resume", "", "-o", "/tmp/x"], "Error: an empty string is not a FILE"),
      (["downloads", "list"], "Error: downloads needs --state-dir DIR"),
      (
        ["downloads", "list", "--state-dir", ""],
        "Error: --state-dir needs a path, not an empty string"
      ),
      (
        ["downloads", "fly", "--state-dir", "/tmp"],
        "Error: unknown action 'fly' (list, add, run, pause, resume, cancel)"
      ),
    ])
  func usage(arguments: [String], message: String) throws {
    let (status, _, error) = try runExecutable(arguments)
    #expect(status == 64)
    #expect(error.hasPrefix(message + "\n"))
  }

  @Test("downloads: add (once per URL and file), list, run")
  func downloads() throws {
    let server = try TestHTTPServer()
    defer { server.stop() }
    server.serve(path: "/a.bin", body: payload, etag: "\"a\"")
    server.serve(path: "/b.bin", body: payload.prefix(1000), etag: "\"b\"")
    let directory = try scratchDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let state = directory.appendingPathComponent("state").path
    func run(_ arguments: [String]) throws -> (Int32, String) {
      let (status, stdout, _) = try runExecutable(
        ["downloads"] + arguments + ["--state-dir", state])
      return (status, String(decoding: stdout, as: UTF8.self))
    }
    let a = try run([
      "add", server.baseURL.appendingPathComponent("a.bin").absoluteString, "-o",
      directory.appendingPathComponent("a.bin").path, "--group", "g",
    ])
    let again = try run([
      "add", server.baseURL.appendingPathComponent("a.bin").absoluteString, "-o",
      directory.appendingPathComponent("a.bin").path,
    ])
    #expect(a.0 == 0)
    #expect(again.1 == a.1)
    _ = try run([
      "add", server.baseURL.appendingPathComponent("b.bin").absoluteString, "-o",
      directory.appendingPathComponent("b.bin").path, "--group", "g",
    ])
    let listed = try run(["list"])
    #expect(listed.1.split(separator: "\n").count == 2)
    #expect(listed.1.contains("queued"))
    let ran = try run(["run", "--jobs", "2"])
    #expect(ran.0 == 0)
    #expect(ran.1.contains("group g: 2 completed, 0 failed"))
    #expect(
      firstDifference(try Data(contentsOf: directory.appendingPathComponent("a.bin")), payload)
        == nil)
    let json = try run(["list", "--json"])
    #expect(json.1.hasPrefix("{\"schemaVersion\": 1, \"tasks\": ["))
    #expect(json.1.components(separatedBy: "\"state\":\"completed\"").count == 3)
  }

  @Test("downloads add: a task list that cannot be written fails the command, and adds nothing")
  func listNotWritable() throws {
    let (directory, state) = try stateDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let list = state.appendingPathComponent("tasks.json").path
    try FileManager.default.createSymbolicLink(
      atPath: list, withDestinationPath: "missing/tasks.json")
    let added = try runExecutable([
      "downloads", "add", "http://127.0.0.1:9/file", "-o",
      directory.appendingPathComponent("file").path, "--state-dir", state.path,
    ])
    #expect(added.0 == 1)
    #expect(added.1.isEmpty)
    #expect(
      added.2
        == "Error: \(state.path): cannot write the task list \(list): No such file or directory\n")
    let listed = try runExecutable(["downloads", "list", "--state-dir", state.path])
    #expect(String(decoding: listed.1, as: UTF8.self) == "no downloads\n")
  }

  @Test("downloads list: a task's URL, file and error stay on their line, escaped")
  func listEscaped() throws {
    let (directory, state) = try stateDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let list = """
      [{"id":"t1","url":"http://127.0.0.1:9/a\\u009b1m","destination":"/tmp/x\\ny",\
      "state":"failed","bytes":0,"detail":"http-status: 500 \\u001b[2J"}]
      """
    try Data(list.utf8).write(to: state.appendingPathComponent("tasks.json"))
    let listed = try runExecutable(["downloads", "list", "--state-dir", state.path])
    #expect(listed.0 == 0)
    #expect(
      String(decoding: listed.1, as: UTF8.self)
        == "t1  failed  0 bytes  http://127.0.0.1:9/a\\u{9b}1m -> /tmp/x\\ny"
        + "  http-status: 500 \\u{1b}[2J\n")
  }

  @Test("downloads: one command at a time changes a state directory; list reads it meanwhile")
  func stateDirectoryLock() throws {
    let (directory, state) = try stateDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    // This process holds the lock, as a run still going would.
    let lock = open(state.appendingPathComponent("downloads.lock").path, O_RDWR | O_CREAT, 0o644)
    try #require(lock >= 0)
    try #require(flock(lock, LOCK_EX | LOCK_NB) == 0)
    let add = [
      "downloads", "add", "http://127.0.0.1:9/file", "-o",
      directory.appendingPathComponent("file").path, "--state-dir", state.path,
    ]
    for arguments in [add, ["downloads", "run", "--state-dir", state.path]] {
      let refused = try runExecutable(arguments)
      #expect(refused.0 == 1)
      #expect(
        refused.2
          == "Error: \(state.path): another downloads command is using this state directory "
          + "(a run still going?); try again once it has ended\n")
    }
    let listed = try runExecutable(["downloads", "list", "--state-dir", state.path])
    #expect(listed.0 == 0)
    #expect(String(decoding: listed.1, as: UTF8.self) == "no downloads\n")
    close(lock)
    let added = try runExecutable(add)
    #expect(added.0 == 0, "\(added.2)")
  }

  @Test(
    "download --header: a field that cannot be sent is a usage error, as for edit",
    arguments: [
      ("X: a\r\nInjected: b", "the value of X holds a line break or NUL"),
      ("Bad Name: b", "\"Bad Name\" is not an HTTP header name"),
    ])
  func invalidHeader(header: String, message: String) {
    let (status, captured) = run([
      "download", "http://127.0.0.1:9/file", "-o", "/tmp/never-written", "--header", header,
    ])
    #expect(status == .usage)
    #expect(
      captured.standardError
        == "Error: \(message)\nRun 'resumedata download --help' for usage.\n")
  }

  @Test(
    "A --state-dir or --temp-dir that is a file is named at once (exit 1), before any request",
    arguments: [
      ["download", "http://127.0.0.1:9/file", "-o", "OUT", "--state-dir", "FILE"],
      ["download", "http://127.0.0.1:9/file", "-o", "OUT", "--temp-dir", "FILE"],
      ["downloads", "list", "--state-dir", "FILE"],
      ["downloads", "add", "http://127.0.0.1:9/file", "-o", "OUT", "--state-dir", "FILE"],
    ])
  func directoryIsAFile(arguments: [String]) throws {
    let directory = try scratchDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("file").path
    try Data("x".utf8).write(to: URL(fileURLWithPath: file))
    let resolved = arguments.map {
      $0 == "FILE" ? file : $0 == "OUT" ? directory.appendingPathComponent("out").path : $0
    }
    let option = arguments.contains("--temp-dir") ? "--temp-dir" : "--state-dir"
    let (status, captured) = run(resolved)
    #expect(status == .failure)
    #expect(captured.standardError == "Error: \(file): not a directory (\(option))\n")
  }
}

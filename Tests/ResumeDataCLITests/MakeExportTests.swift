import Foundation
import ResumeData
import TestHTTPServer
import TestSupport
import Testing

/// 300 KB of a repeatable pattern: the file these tests download in parts.
private let payload = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 10) })
private let tag = "\"m1\""

/// A server holding `payload` at `/m.bin` (short timeouts: answers the probe stops reading are not
/// waited for).
private func payloadServer(etag: String? = tag) throws -> TestHTTPServer {
  let server = try TestHTTPServer(configuration: .init(idleTimeout: .seconds(1)))
  server.serve(path: "/m.bin", body: payload, etag: etag)
  return server
}

/// The partial file a download of `url` leaves when the server drops the connection after
/// `bytes` bytes: made by this toolkit's own downloader, its state file then thrown away.
private func partialFromDownloader(
  _ server: TestHTTPServer, url: String, bytes: Int, in scratch: ScratchDirectory
) throws -> String {
  server.scheduleFaults(path: "/m.bin", [.once(.closeAfter(bytes: bytes))])
  let state = scratch.path("state")
  let (status, _, error) = try runExecutable([
    "download", url, "-o", scratch.path("first.bin"), "--state-dir", state, "--retries", "0",
    "--no-resume-check",
  ])
  #expect(status == 1, "\(error)")
  let name = try #require(
    try FileManager.default.contentsOfDirectory(atPath: state).first {
      $0.hasPrefix("CFNetworkDownload_")
    })
  try FileManager.default.removeItem(atPath: state + "/first.bin.resumedata")
  let partial = scratch.path("model.part")
  try FileManager.default.moveItem(atPath: state + "/" + name, toPath: partial)
  return partial
}

@Suite("resumedata make, export and download --partial")
struct MakeExportTests {
  @Test(
    "A partial file from our downloader, made into a blob for each system, resumes byte-identical",
    arguments: ["linux", "ios13+", "ios12", "ios11.3+", "ios10.0-10.1"])
  func makeThenResume(system: String) throws {
    let server = try payloadServer()
    defer { server.stop() }
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let url = server.baseURL.appendingPathComponent("m.bin").absoluteString
    let partial = try partialFromDownloader(server, url: url, bytes: 120_000, in: scratch)
    #expect(try Data(contentsOf: URL(fileURLWithPath: partial)) == payload.prefix(120_000))
    server.clearRequests()
    let blob = scratch.path("model.resumedata")
    let (status, stdout, error) = try runExecutable([
      "make", url, "--partial", partial, "--etag", tag, "--for", system, "--temp-name",
      "CFNetworkDownload_Mk0001.tmp", "-o", blob,
    ])
    #expect(status == 0, "\(error)")
    #expect(
      text(stdout).hasPrefix(
        "info tail-verified: the partial file's last 65536 bytes (from byte 54464) are the server's under \"m1\" (206 of 300000 bytes)\n"
      ))
    #expect(text(stdout).contains("info place-partial-file: "))
    // The check asked for exactly those bytes, conditionally.
    let check = try #require(server.requests(path: "/m.bin").last)
    #expect(check.header("Range") == "bytes=54464-119999")
    #expect(check.header("If-Range") == tag)
    let made = try decodedResume(at: blob)
    #expect(made.bytesReceived == 120_000)
    #expect(made.entityTag == tag)
    #expect(made.tempFileName == "CFNetworkDownload_Mk0001.tmp")
    // Where the system would look for it.
    let temporary = scratch.path("tmp")
    try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
    try FileManager.default.moveItem(
      atPath: partial, toPath: temporary + "/CFNetworkDownload_Mk0001.tmp")
    server.clearRequests()
    let output = scratch.path("model.bin")
    let resumed = try runExecutable(["resume", blob, "-o", output, "--temp-dir", temporary])
    #expect(resumed.0 == 0, "\(resumed.2)")
    #expect(resumed.2.hasPrefix("resuming at byte 120000\n"))
    #expect(firstDifference(try Data(contentsOf: URL(fileURLWithPath: output)), payload) == nil)
    #expect(server.requests(path: "/m.bin").map { $0.header("If-Range") } == [tag])
  }

  @Test(
    "Refused, nothing written: a tail that differs, a stale ETag, a longer file, no validator, a weak ETag",
    arguments: [
      ("tail", ["--etag", tag], "tail-mismatch"),
      ("stale", ["--etag", "\"m0\""], "validator-mismatch"),
      ("longer", ["--trust-server-validator"], "partial-longer-than-file"),
      ("complete", ["--etag", tag], "partial-complete"),
      ("plain", [], "validator-not-given"),
      ("weak", ["--trust-server-validator"], "server-cannot-resume"),
    ])
  func refused(kind: String, validator: [String], code: String) throws {
    let server = try payloadServer(etag: kind == "weak" ? "W/\"m1\"" : tag)
    defer { server.stop() }
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    var bytes = payload.prefix(100_000)
    switch kind {
    case "tail": bytes[99_000] ^= 0x55
    case "longer": bytes = payload + Data(repeating: 0, count: 10)
    case "complete": bytes = payload
    default: break
    }
    let partial = try scratch.write(Data(bytes), to: "x.part")
    let url = server.baseURL.appendingPathComponent("m.bin").absoluteString
    let blob = scratch.path("x.resumedata")
    let (status, stdout, error) = try runExecutable(
      ["make", url, "--partial", partial, "--for", "ios13+", "-o", blob] + validator)
    #expect(status == 1)
    #expect(text(stdout).contains("error \(code): "), "\(text(stdout))")
    #expect(error == "Error: \(partial): \(code): no blob made\n")
    #expect(!FileManager.default.fileExists(atPath: blob))
    if kind == "tail" {
      #expect(text(stdout).contains("byte 99000 of the partial file differs"))
    }
    if kind == "plain" { #expect(server.requests.isEmpty) }
  }

  @Test(
    "Bad input: clear errors and exit statuses, before any request where it can be told",
    arguments: [
      (
        ["make", "ftp://127.0.0.1/x", "--partial", "P", "--for", "ios13+", "-o", "O"], 64,
        "Error: ftp://127.0.0.1/x is not an http or https URL\nRun 'resumedata make --help' for usage.\n"
      ),
      (["make", "URL", "--partial", "P", "--for", "ios99", "-o", "O"], 64, nil),
      (
        [
          "make", "URL", "--partial", "/nonexistent/p", "--for", "ios13+", "-o", "O", "--etag",
          "\"a\"",
        ],
        66, "Error: /nonexistent/p: cannot read: No such file or directory\n"
      ),
      (["make", "URL", "--partial", "P", "--for", "ios13+", "-o", "O", "--etag", "a"], 64, nil),
      (
        [
          "make", "URL", "--partial", "P", "--for", "ios13+", "-o", "O", "--etag", "\"a\"",
          "--last-modified", "x",
        ], 64, nil
      ),
      (
        ["probe", "file:///etc/passwd"], 64,
        "Error: file:///etc/passwd is not an http or https URL\nRun 'resumedata probe --help' for usage.\n"
      ),
      (["probe", "URL", "--requests", "0"], 64, nil),
      (["probe", "URL", "--timeout", "-1"], 64, nil),
      (["export", "/nonexistent/blob", "-o", "x"], 66, nil),
      (["export", "/nonexistent/blob"], 64, nil),
    ] as [([String], Int32, String?)])
  func badInput(arguments: [String], status: Int32, error: String?) throws {
    let server = try payloadServer()
    defer { server.stop() }
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let partial = try scratch.write(payload.prefix(1000), to: "p.part")
    let url = server.baseURL.appendingPathComponent("m.bin").absoluteString
    let resolved = arguments.map { word -> String in
      switch word {
      case "URL": url
      case "P": partial
      case "O": scratch.path("o.resumedata")
      default: word
      }
    }
    let (actual, _, message) = try runExecutable(resolved)
    #expect(actual == status, "\(message)")
    if let error { #expect(message == error) }
    #expect(message.hasPrefix("Error: "))
    #expect(server.requests.isEmpty)
  }

  @Test("An unreachable host, and a server slower than --timeout: exit 66, never a hang")
  func unreachable() throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let partial = try scratch.write(payload.prefix(1000), to: "p.part")
    let gone = try TestHTTPServer()
    let url = gone.baseURL.appendingPathComponent("m.bin").absoluteString
    gone.stop()
    for command in [
      ["probe", url],
      [
        "make", url, "--partial", partial, "--etag", tag, "--for", "ios13+", "-o",
        scratch.path("o"),
      ],
    ] {
      let (status, _, error) = try runExecutable(command)
      #expect(status == 66)
      #expect(error.hasPrefix("Error: \(url): "), "\(error)")
    }
    let slow = try payloadServer()
    defer { slow.stop() }
    slow.setFaults(path: "/m.bin", [.delay(.seconds(20))])
    let slowURL = slow.baseURL.appendingPathComponent("m.bin").absoluteString
    let (status, _, error) = try runExecutable(["probe", slowURL, "--timeout", "0.5"])
    #expect(status == 66)
    #expect(
      error
        == "Error: \(slowURL): no complete answer from 127.0.0.1 before the probe's timeout\n")
  }

  @Test("export writes the partial file and its sidecar; download --partial continues the pair")
  func exportThenDownload() throws {
    let server = try payloadServer()
    defer { server.stop() }
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let url = server.baseURL.appendingPathComponent("m.bin").absoluteString
    // A blob of our downloader's, as a failed download leaves it.
    server.scheduleFaults(path: "/m.bin", [.once(.closeAfter(bytes: 90_000))])
    let state = scratch.path("state")
    let failed = try runExecutable([
      "download", url, "-o", scratch.path("first.bin"), "--state-dir", state, "--retries", "0",
      "--no-resume-check", "--header", "X-Token: t1",
    ])
    #expect(failed.0 == 1)
    let blob = state + "/first.bin.resumedata"
    let exported = scratch.path("out/model.part")
    try FileManager.default.createDirectory(
      atPath: scratch.path("out"), withIntermediateDirectories: true)
    let (status, stdout, error) = try runExecutable([
      "export", blob, "--temp-dir", state, "-o", exported,
    ])
    #expect(status == 0, "\(error)")
    #expect(
      text(stdout)
        == "\(exported): 90000 bytes of \(url), If-Range \"m1\"\n\(exported).json: the sidecar\n")
    #expect(try Data(contentsOf: URL(fileURLWithPath: exported)) == payload.prefix(90_000))
    let sidecar = try String(contentsOfFile: exported + ".json", encoding: .utf8)
    #expect(
      sidecar == """
        {
          "schemaVersion": 1,
          "url": "\(url)",
          "originalURL": "\(url)",
          "bytes": 90000,
          "entityTag": "\\"m1\\"",
          "lastModified": null,
          "validator": "\\"m1\\"",
          "headers": {"X-Token": "t1"},
          "partialFile": "model.part"
        }

        """)
    // The blob's own partial file is left as it was.
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: state).contains {
        $0.hasPrefix("CFNetworkDownload_")
      })
    server.clearRequests()
    let output = scratch.path("out/model.bin")
    let continued = try runExecutable(["download", "--partial", exported, "-o", output, "--json"])
    #expect(continued.0 == 0, "\(continued.2)")
    #expect(continued.2.hasPrefix("resuming at byte 90000\n"))
    #expect(firstDifference(try Data(contentsOf: URL(fileURLWithPath: output)), payload) == nil)
    let requests = server.requests(path: "/m.bin")
    #expect(requests.map { $0.header("Range") } == ["bytes=90000-"])
    #expect(requests.map { $0.header("If-Range") } == [tag])
    #expect(requests.map { $0.header("X-Token") } == ["t1"])
    #expect(!FileManager.default.fileExists(atPath: exported))
    #expect(!FileManager.default.fileExists(atPath: exported + ".json"))
    #expect(text(continued.1).contains("\"resumeCheck\": null"))
  }

  @Test(
    "download --partial refuses what it cannot continue safely",
    arguments: [
      ("{\"url\": \"URL\", \"bytes\": 10, \"partialFile\": \"p.part\"}", 1, "records no ETag"),
      (
        "{\"url\": \"URL\", \"bytes\": 10, \"entityTag\": \"\\\"m1\\\"\", \"partialFile\": \"p.part\"}",
        1, "holds 1000 bytes, but its sidecar vouches for 10"
      ),
      ("[1]", 65, "the sidecar is not a JSON object"),
      ("{\"bytes\": 10, \"partialFile\": \"p.part\"}", 65, "url: missing"),
      (
        "{\"url\": \"URL\", \"partialFile\": \"../p\", \"entityTag\": \"\\\"m1\\\"\"}", 65,
        "is not a bare file name"
      ),
    ] as [(String, Int32, String)])
  func partialRefused(sidecar: String, status: Int32, message: String) throws {
    let server = try payloadServer()
    defer { server.stop() }
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let url = server.baseURL.appendingPathComponent("m.bin").absoluteString
    let partial = try scratch.write(payload.prefix(1000), to: "p.part")
    _ = try scratch.write(
      Data(sidecar.replacingOccurrences(of: "URL", with: url).utf8), to: "p.part.json")
    let (actual, _, error) = try runExecutable([
      "download", "--partial", partial, "-o", scratch.path("p.bin"),
    ])
    #expect(actual == status)
    #expect(error.contains(message), "\(error)")
    #expect(server.requests.isEmpty)
    #expect(try Data(contentsOf: URL(fileURLWithPath: partial)) == payload.prefix(1000))
  }

  @Test(
    "download says once, at the start, when the server will not let it resume, and --json keeps it",
    arguments: [
      (nil, [Fault](), nil as String?),
      (
        nil, [],
        "note: if interrupted, this download cannot resume: it restarts from zero: without a strong ETag or a Last-Modified date it never trusts the partial file (no-validator)\n"
      ),
      (
        tag, [.ignoreRange],
        "note: if interrupted, this download cannot resume: it restarts from zero: Range was answered 200 OK (ranges-ignored)\n"
      ),
    ] as [(String?, [Fault], String?)])
  func resumeNote(etag: String?, faults: [Fault], note: String?) throws {
    let validated = note == nil
    let server = try payloadServer(etag: validated ? tag : etag)
    defer { server.stop() }
    if !faults.isEmpty { server.setFaults(path: "/m.bin", faults) }
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let url = server.baseURL.appendingPathComponent("m.bin").absoluteString
    let (status, stdout, error) = try runExecutable([
      "download", url, "-o", scratch.path("m.bin"), "--json", "--digest", "none",
    ])
    #expect(status == 0)
    #expect(error == (note ?? ""))
    let object = try #require(
      try JSONSerialization.jsonObject(with: stdout) as? [String: Any])
    let check = try #require(object["resumeCheck"] as? [String: Any])
    #expect(check["resumes"] as? Bool == validated)
    #expect(
      firstDifference(try Data(contentsOf: URL(fileURLWithPath: scratch.path("m.bin"))), payload)
        == nil)
    // --no-resume-check asks nothing first.
    let skipped = try runExecutable([
      "download", url, "-o", scratch.path("again.bin"), "--no-resume-check", "--json",
    ])
    #expect(skipped.2 == "")
    #expect(text(skipped.1).contains("\"resumeCheck\": null"))
  }
}

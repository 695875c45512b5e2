import Foundation
import ResumeData
import ResumeDataCLI
import TestHTTPServer
import TestSupport
import Testing

/// 200 KB of a repeatable pattern.
private let payload = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 7) })

/// Standard output parsed as one JSON object.
private func object(_ output: Data) throws -> [String: Any] {
  try #require(try JSONSerialization.jsonObject(with: output) as? [String: Any])
}

@Suite("resumedata --json")
struct JSONOutputTests {
  @Test(
    "Every subcommand that reads a file prints one JSON object with schemaVersion 1 first",
    arguments: [
      ["inspect", "Fixtures/resume/v2.xml.plist", "--json"],
      ["validate", "Fixtures/resume/v2.xml.plist", "--json"],
      ["repair", "Fixtures/resume/v2.xml.plist", "--target", "ios13+", "-o", "OUT", "--json"],
      ["convert", "Fixtures/resume/v2.xml.plist", "--to", "keyed", "-o", "OUT", "--json"],
      [
        "edit", "Fixtures/resume/v2.xml.plist", "--url", "https://a.example/b", "-o", "OUT",
        "--json",
      ],
      ["archive", "Fixtures/resume/keyed-v4.archive", "--json"],
      ["plist", "Fixtures/plist/resume-shaped.xml.plist", "--json"],
      ["completions", "--json"],
    ])
  func schemaVersion(arguments: [String]) throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let resolved = arguments.map {
      $0 == "OUT"
        ? scratch.path("out")
        : $0.hasPrefix("Fixtures/") ? repositoryRoot.appendingPathComponent($0).path : $0
    }
    let (status, captured) = run(resolved)
    #expect(status == .success)
    #expect(captured.standardError == "")
    #expect(text(captured.standardOutput).hasPrefix("{\n  \"schemaVersion\": 1,\n"))
    #expect(try object(captured.standardOutput)["schemaVersion"] as? Int == 1)
  }

  @Test("plist --json is --to json; with another --to it is a usage error")
  func plistJSON() {
    let path = fixturePath("resume-shaped.xml.plist")
    #expect(
      run(["plist", path, "--json"]).1.standardOutput
        == run(["plist", path, "--to", "json"]).1.standardOutput)
    let (status, captured) = run(["plist", path, "--json", "--to", "xml"])
    #expect(status == .usage)
    #expect(
      captured.standardError
        == "Error: --json and --to xml disagree\nRun 'resumedata plist --help' for usage.\n")
  }

  @Test("downloads: list, add, pause and cancel print one JSON object each")
  func downloads() async throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let state = scratch.path("state")
    let empty = await runOnOwnThread(["downloads", "list", "--state-dir", state, "--json"])
    #expect(empty.0 == .success)
    #expect(text(empty.1.standardOutput) == "{\"schemaVersion\": 1, \"tasks\": []}\n")

    let url = "http://127.0.0.1:9/files/a.bin"
    let added = await runOnOwnThread([
      "downloads", "add", url, "-o", scratch.path("a.bin"), "--state-dir", state, "--json",
    ])
    #expect(added.0 == .success)
    let task = try #require(try object(added.1.standardOutput)["task"] as? [String: Any])
    let id = try #require(task["id"] as? String)
    #expect(task["url"] as? String == url)
    #expect(task["state"] as? String == "queued")
    #expect(task["bytes"] as? Int == 0)

    let plainAdd = await runOnOwnThread([
      "downloads", "add", url, "-o", scratch.path("a.bin"), "--state-dir", state,
    ])
    #expect(text(plainAdd.1.standardOutput) == id + "\n")

    let paused = await runOnOwnThread(["downloads", "pause", id, "--state-dir", state, "--json"])
    #expect(paused.0 == .success)
    let pausedObject = try object(paused.1.standardOutput)
    #expect(pausedObject["schemaVersion"] as? Int == 1)
    #expect(pausedObject["id"] as? String == id)
    #expect((pausedObject["task"] as? [String: Any])?["state"] as? String == "paused")

    let cancelled = await runOnOwnThread([
      "downloads", "cancel", id, "--state-dir", state, "--json",
    ])
    #expect(cancelled.0 == .success)
    #expect(
      text(cancelled.1.standardOutput)
        == "{\"schemaVersion\": 1, \"id\": \"\(id)\", \"task\": null}\n")
    let after = await runOnOwnThread(["downloads", "list", "--state-dir", state, "--json"])
    #expect(text(after.1.standardOutput) == "{\"schemaVersion\": 1, \"tasks\": []}\n")
  }

  @Test("downloads run --json: the final task list instead of a line for each event")
  func downloadsRun() async throws {
    let server = try TestHTTPServer()
    defer { server.stop() }
    server.serve(path: "/r.bin", body: payload, etag: "\"r\"")
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let state = scratch.path("state")
    let url = server.baseURL.appendingPathComponent("r.bin").absoluteString
    let added = await runOnOwnThread([
      "downloads", "add", url, "-o", scratch.path("r.bin"), "--state-dir", state, "--group", "g",
    ])
    #expect(added.0 == .success)
    let id = text(added.1.standardOutput).trimmingCharacters(in: .newlines)
    let (status, stdout, _) = try runExecutable([
      "downloads", "run", "--state-dir", state, "--json",
    ])
    #expect(status == 0)
    let output = text(stdout)
    #expect(output.hasPrefix("{\"schemaVersion\": 1, \"tasks\": [{"))
    #expect(output.hasSuffix("}]}\n"))
    #expect(!output.contains("group g:"))
    let tasks = try #require(try object(stdout)["tasks"] as? [[String: Any]])
    #expect(tasks.count == 1)
    #expect(tasks.first?["id"] as? String == id)
    #expect(tasks.first?["state"] as? String == "completed")
    #expect(tasks.first?["bytes"] as? Int == payload.count)
    #expect(
      firstDifference(try Data(contentsOf: scratch.url.appendingPathComponent("r.bin")), payload)
        == nil)
  }

  @Test("download --json: the outcome as one object instead of the line")
  func download() throws {
    let server = try TestHTTPServer()
    defer { server.stop() }
    server.serve(path: "/p.bin", body: payload, etag: "\"p1\"")
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let url = server.baseURL.appendingPathComponent("p.bin").absoluteString
    let (plainStatus, plainOutput, _) = try runExecutable([
      "download", url, "-o", scratch.path("plain.bin"),
    ])
    #expect(plainStatus == 0)
    let digest = try #require(text(plainOutput).split(separator: " ").last).dropLast()

    let output = scratch.path("p.bin")
    let (status, stdout, _) = try runExecutable(["download", url, "-o", output, "--json"])
    #expect(status == 0)
    #expect(
      text(stdout) == """
        {
          "schemaVersion": 1,
          "status": "completed",
          "url": "\(url)",
          "file": "\(output)",
          "bytes": 200000,
          "digestAlgorithm": "sha256",
          "digest": "\(digest)",
          "resumeData": null,
          "error": null,
          "resumeCheck": {"resumes": true, "outcome": "resumes", "reasons": [], "message": "resumes (Range with If-Range: \\"p1\\" answered 206, Content-Range: bytes 100000-101023/200000)"}
        }

        """)
  }

  @Test("download --json of a missing file: status failed with the error, exit 1")
  func downloadFailure() throws {
    let server = try TestHTTPServer()
    defer { server.stop() }
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let url = server.baseURL.appendingPathComponent("missing.bin").absoluteString
    let output = scratch.path("m.bin")
    let (status, stdout, error) = try runExecutable([
      "download", url, "-o", output, "--json", "--retries", "0",
    ])
    #expect(status == 1)
    let object = try object(stdout)
    #expect(object["schemaVersion"] as? Int == 1)
    #expect(object["status"] as? String == "failed")
    #expect(object["file"] as? String == output)
    let failure = try #require(object["error"] as? [String: Any])
    #expect(failure["code"] as? String == "http-status")
    #expect(error.hasPrefix("Error: http-status: "))
    // An error page is no download to resume: the check says nothing, and records what it saw.
    let check = try #require(object["resumeCheck"] as? [String: Any])
    #expect(check["outcome"] as? String == "fails")
    #expect(check["reasons"] as? [String] == ["http-status"])
  }

  @Test("resume --json: continues from a v2 blob and reports the whole file")
  func resume() throws {
    let server = try TestHTTPServer()
    defer { server.stop() }
    server.serve(path: "/p.bin", body: payload, etag: "\"p1\"")
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    try payload.prefix(50_000).write(
      to: scratch.url.appendingPathComponent("CFNetworkDownload_j.tmp"))
    let url = server.baseURL.appendingPathComponent("p.bin").absoluteString
    let blob = try ResumeData(
      building: [
        ResumeDataKey.downloadURL: .string(url),
        ResumeDataKey.bytesReceived: .integer(.init(50_000)),
        ResumeDataKey.entityTag: .string("\"p1\""),
        ResumeDataKey.tempFileName: .string("CFNetworkDownload_j.tmp"),
      ], as: .v2)
    let blobPath = try scratch.write(try blob.encoded(), to: "blob.plist")
    let output = scratch.path("out.bin")
    let (status, stdout, _) = try runExecutable([
      "resume", blobPath, "-o", output, "--json", "--digest", "none",
    ])
    #expect(status == 0)
    #expect(
      text(stdout) == """
        {
          "schemaVersion": 1,
          "status": "completed",
          "url": "\(url)",
          "file": "\(output)",
          "bytes": 200000,
          "digestAlgorithm": null,
          "digest": null,
          "resumeData": null,
          "error": null,
          "resumeCheck": null
        }

        """)
    #expect(firstDifference(try Data(contentsOf: URL(fileURLWithPath: output)), payload) == nil)
  }
}

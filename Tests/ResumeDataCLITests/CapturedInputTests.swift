import Foundation
import ResumeData
import ResumeDataCLI
import TestSupport
import Testing

private func path(_ name: String) -> String {
  repositoryRoot.appendingPathComponent("Fixtures").appendingPathComponent(name).path
}

private func relative(_ text: String) -> String {
  text.replacingOccurrences(of: repositoryRoot.path + "/", with: "")
}

@Suite("Captured input on the command line")
struct CapturedInputTests {
  @Test(
    "Every captured fixture is read by validate, with how",
    arguments: [
      ("captured/v2.base64.txt", "ok (v2; base64 text (on 35 lines))"),
      ("captured/keyed-v4.base64url.txt", "ok (keyed; base64 text (URL-safe, without padding))"),
      ("captured/keyed-v4.hex", "ok (keyed; hex text (on 134 lines))"),
      ("captured/v4-byte-range.0x.txt", "ok (v4; hex text (after 0x))"),
      (
        "captured/keyed-v5-response.nsdata.txt",
        "ok (keyed; the description of NSData (<…>, as NSLog and the debugger print it))"
      ),
      (
        "captured/v2.nslog.txt",
        "ok (v2; the description of the resume dictionary (as NSLog prints it), recovered)"
      ),
    ])
  func validate(_ name: String, _ verdict: String) {
    let (status, captured) = run(["validate", path(name)])
    #expect(status == .success)
    // The first line: a v4 blob with a byte range has its warning under it.
    #expect(
      relative(text(captured.standardOutput)).split(separator: "\n").first
        == "Fixtures/\(name): \(verdict)"[...])
  }

  @Test("The elided description fails validate and inspect with what to capture instead")
  func elided() {
    let name = "captured/keyed-v5-response.ios13-elided.txt"
    let (status, captured) = run(["inspect", path(name)])
    #expect(status == .malformedInput)
    #expect(
      relative(captured.standardError)
        == "Error: Fixtures/\(name):1:81: the description iOS 13 and later print of Data (\"{length = 4641, bytes = 0x… … }\"), which shows only the first 24 and the last 8 bytes: the blob cannot be recovered from it; capture the blob itself: resumeData.base64EncodedString(), or resumeData.write(to:) (in the debugger: po resumeData.base64EncodedString())\n"
    )
    let (validated, lines) = run(["validate", path(name)])
    #expect(validated == .malformedInput)
    #expect(relative(text(lines.standardOutput)).hasPrefix("Fixtures/\(name): malformed: 1:81: "))
  }

  @Test("repair, convert and edit write the blob's own bytes and say how they read it")
  func writers() throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let out = scratch.path("out.plist")
    let (status, captured) = run([
      "convert", path("captured/keyed-v4.hex"), "--to", "keyed", "-o", out,
    ])
    #expect(status == .success)
    #expect(
      text(captured.standardOutput)
        == "info input-form: read as hex text (on 134 lines); the blob written is its own bytes\n")
    #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == fixture("resume/keyed-v4.archive"))
    let (repaired, repairOutput) = run([
      "repair", path("captured/v2.nslog.txt"), "--target", "ios13+", "-o", out,
    ])
    #expect(repaired == .success)
    #expect(text(repairOutput.standardOutput).hasPrefix("info recovered-from-description: "))
    #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == fixture("resume/v2.xml.plist"))
  }

  @Test("--input-form forces a form; a wrong one fails where the text does not fit it")
  func forced() {
    let (status, captured) = run([
      "inspect", path("captured/keyed-v4.hex"), "--input-form", "base64",
    ])
    #expect(status == .malformedInput)
    #expect(captured.standardError.contains("read as base64 text"))
    let (raw, rawOutput) = run(["inspect", path("captured/v2.base64.txt"), "--input-form", "raw"])
    #expect(raw == .malformedInput)
    #expect(
      relative(rawOutput.standardError)
        == "Error: Fixtures/captured/v2.base64.txt:@0: input looks like an OpenStep (old-style text) property list or .strings file, not an XML or binary property list\n"
    )
    let (usage, usageOutput) = run([
      "inspect", path("captured/v2.base64.txt"), "--input-form", "b64",
    ])
    #expect(usage == .usage)
    #expect(
      usageOutput.standardError
        == "Error: --input-form must be one of raw, base64, hex, description, not 'b64'\nRun 'resumedata inspect --help' for usage.\n"
    )
  }

  @Test("repair --in-place leaves a file of text alone")
  func inPlace() throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let file = scratch.path("v2.base64.txt")
    let original = try fixture("captured/v2.base64.txt")
    try original.write(to: URL(fileURLWithPath: file))
    let (status, captured) = run(["repair", file, "--target", "ios13+", "--in-place"])
    #expect(status == .failure)
    #expect(
      text(captured.standardOutput).replacingOccurrences(of: scratch.url.path + "/", with: "")
        == "v2.base64.txt: failed: read as base64 text (on 35 lines): --in-place writes only blobs kept as their own bytes back; repair it with -o OUT\n"
    )
    #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == original)
  }

  @Test("Containers: the one blob of a JSON document, the list of a task plist, --at")
  func containers() {
    let (status, captured) = run(["inspect", path("containers/tiercel-tasks.plist"), "--json"])
    #expect(status == .success)
    #expect(
      text(captured.standardOutput) == """
        {
          "schemaVersion": 1,
          "in": "binary-plist",
          "blobs": [
            {
              "keyPath": "[0].resumeData",
              "form": "raw",
              "detail": "data in the property list",
              "generation": "v2",
              "downloadURL": "https://example.com/files/archive.zip",
              "bytesReceived": 1048576,
              "error": null
            },
            {
              "keyPath": "[1].resumeData",
              "form": "raw",
              "detail": "data in the property list",
              "generation": "keyed",
              "downloadURL": "https://example.com/files/archive.zip",
              "bytesReceived": 1048576,
              "error": null
            }
          ]
        }

        """)
    let (expo, expoOutput) = run(["inspect", path("containers/expo-pause-state.json")])
    #expect(expo == .success)
    #expect(
      text(expoOutput.standardOutput).hasPrefix(
        "input         base64 text at resumeData of a JSON document\ngeneration    keyed (info version 5)\n"
      ))
    let (missing, missingOutput) = run([
      "inspect", path("containers/tiercel-tasks.plist"), "--at", "[2].resumeData",
    ])
    #expect(missing == .failure)
    #expect(
      relative(missingOutput.standardError)
        == "Error: Fixtures/containers/tiercel-tasks.plist: no resume blob at [2].resumeData (the blobs are at [0].resumeData, [1].resumeData)\n"
    )
    let (bad, badOutput) = run(["inspect", path("containers/tiercel-tasks.plist"), "--at", "[x]"])
    #expect(bad == .usage)
    #expect(
      badOutput.standardError.hasPrefix(
        "Error: the key path \"[x]\" does not read at 2: an index is a whole number in brackets, as [2]"
      ))
    let (same, sameOutput) = run([
      "inspect", path("containers/background-downloader.json"), "--at", "$.data",
    ])
    #expect(same == .success)
    #expect(
      text(sameOutput.standardOutput).hasPrefix(
        "input         base64 text at data of a JSON document\n"))
  }

  @Test("batch reads a text field in any form; a text that is no blob fails by name")
  func batch() throws {
    let base64 = try fixture("captured/v2.base64.txt")
    let escaped = String(decoding: base64, as: UTF8.self).replacingOccurrences(
      of: "\n", with: "\\n")
    let nslog = String(decoding: try fixture("captured/v2.nslog.txt"), as: UTF8.self)
      .replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
      .replacingOccurrences(of: "\n", with: "\\n")
    let input = """
      {"id":1,"text":"\(escaped)"}
      {"id":2,"text":"\(nslog)"}
      {"id":3,"text":"1048576"}

      """
    let (status, captured) = run(["batch", "-"], input: Data(input.utf8))
    #expect(status == .failure)
    let lines = text(captured.standardOutput).split(separator: "\n")
    #expect(lines.count == 3)
    #expect(lines[0].contains("\"ok\":true,\"generation\":\"v2\",\"container\":\"binary-plist\""))
    #expect(lines[1].contains("\"ok\":true,\"generation\":\"v2\",\"container\":\"xml-plist\""))
    #expect(
      lines[2].hasSuffix(
        "\"error\":{\"kind\":\"malformed\",\"file\":null,\"location\":null,\"message\":\"the number 1048576, not a blob (a byte count such as NSURLSessionResumeBytesReceived, or a task's identifier, is no resume data); capture the blob itself: resumeData.base64EncodedString(), or resumeData.write(to:)\"}}"
      ))
  }
}

@Suite("Fixtures/README.md")
struct CapturedFixtureReadmeTests {
  @Test("Every file of captured/, containers/ and xcappdata/ is named in Fixtures/README.md")
  func named() throws {
    let readme = String(decoding: try fixture("README.md"), as: UTF8.self)
    let files =
      fixturesRecursively("captured") + fixturesRecursively("containers")
      + fixturesRecursively("xcappdata") + ["plist/animals.strings"]
    #expect(files.count >= 20)
    for file in files {
      let name = (file as NSString).lastPathComponent
      #expect(readme.contains("`\(name)`") || readme.contains("/\(name)`"), "\(file)")
    }
  }
}

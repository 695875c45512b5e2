import Foundation
import ResumeDataCLI
import TestSupport
import Testing

/// Runs the tool in-process with both streams' terminal flag and the environment given.
private func runStyled(_ arguments: [String], terminal: Bool, environment: [String: String]) -> (
  ExitCode, String, String
) {
  let captured = Captured()
  let plain = captured.streams(terminal: terminal)
  let streams = Streams(
    readStandardInput: plain.readStandardInput, writeStandardOutput: plain.writeStandardOutput,
    writeStandardError: plain.writeStandardError, standardOutputIsTerminal: terminal,
    standardErrorIsTerminal: terminal, environment: { environment[$0] })
  let status = ResumeDataTool.run(arguments, streams: streams)
  return (status, text(captured.standardOutput), captured.standardError)
}

/// Commands whose output has a coloured word on a terminal: finding severities, verdicts and
/// `Error:`.
private let colouredCommands: [[String]] = [
  ["inspect", resumeFixturePath("v4-byte-range.xml.plist")],
  ["validate", resumeFixturePath("v2.xml.plist"), resumeFixturePath("ios12-empty.archive")],
  ["inspect", resumeFixturePath("no-such-file.plist")],
]

private let escape = "\u{1B}["

@Suite("resumedata colour")
struct ColourTests {
  @Test(
    "No escape sequence when the streams are not terminals, or NO_COLOR is set and not empty",
    arguments: [
      (false, [String: String]()), (false, ["NO_COLOR": "1"]), (true, ["NO_COLOR": "1"]),
      (true, ["NO_COLOR": "yes please"]),
    ])
  func plain(terminal: Bool, environment: [String: String]) {
    for command in colouredCommands {
      let (_, output, error) = runStyled(command, terminal: terminal, environment: environment)
      #expect(!output.contains(escape), "\(command)")
      #expect(!error.contains(escape), "\(command)")
      // Exactly what runs without the new stream settings print.
      let (_, captured) = run(command)
      #expect(output == text(captured.standardOutput))
      #expect(error == captured.standardError)
    }
  }

  @Test(
    "On a terminal without NO_COLOR (or with it empty), severities, verdicts and Error: are coloured",
    arguments: [[String: String](), ["NO_COLOR": ""], ["TERM": "xterm"]])
  func coloured(environment: [String: String]) {
    let inspect = runStyled(colouredCommands[0], terminal: true, environment: environment)
    #expect(
      inspect.1.contains(
        "\n  \(escape)33mwarning\(escape)0m byte-range-present: NSURLSessionResumeByteRange is set")
    )
    // A v2 blob, which iOS 10.0–10.1 may have written, keeps its info finding.
    let v2 = runStyled(
      ["inspect", resumeFixturePath("v2.xml.plist")], terminal: true, environment: environment)
    #expect(
      v2.1.contains(
        "\n  \(escape)36minfo\(escape)0m ios10-request-layout: the request archives"))

    let validate = runStyled(colouredCommands[1], terminal: true, environment: environment)
    #expect(validate.0 == .failure)
    #expect(
      validate.1 == """
        \(resumeFixturePath("v2.xml.plist")): \(escape)32mok\(escape)0m (v2)
        \(resumeFixturePath("ios12-empty.archive")): \(escape)31mnot resumable\(escape)0m: \
        empty-blob: the blob records no received bytes (the iOS 12.0–12.2 \
        cancel-before-first-byte case): start the download over
          \(escape)31merror\(escape)0m no-validator: neither an ETag nor a Last-Modified date was \
        recorded: the server cannot confirm the file is unchanged (NSURLSessionResumeEntityTag)
          \(escape)33mwarning\(escape)0m original-request-missing: there is no original request: \
        iOS 10.3–12.1 then gives the task a nil originalRequest (repair for them copies the \
        current request) (NSURLSessionResumeOriginalRequest)
        2 errors, 1 warning in 1 of 2 files

        """)

    let missing = runStyled(colouredCommands[2], terminal: true, environment: environment)
    #expect(missing.0 == .unreadableInput)
    #expect(
      missing.2
        == "\(escape)1;31mError:\(escape)0m \(resumeFixturePath("no-such-file.plist")): no such file\n"
    )
  }

  @Test("The findings repair prints are coloured on the stream they go to")
  func repairFindings() throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let arguments = [
      "repair", resumeFixturePath("v4-byte-range.xml.plist"), "--target", "ios11.0-11.2", "-o",
    ]
    let toFile = runStyled(arguments + [scratch.path("out")], terminal: true, environment: [:])
    #expect(toFile.0 == .success)
    #expect(toFile.1.hasPrefix("\(escape)36minfo\(escape)0m remove-byte-range: "))
    let toStandardError = runStyled(
      arguments + ["-"], terminal: false, environment: [:])
    #expect(!toStandardError.2.contains(escape))
    #expect(toStandardError.2.hasPrefix("info remove-byte-range: "))
  }
}

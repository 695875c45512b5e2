import Foundation
import ResumeDataCLI
import Testing

/// The command-line errors of `repair`, `convert`, `edit` and `validate`: exact message, status.
@Suite("resumedata repair, convert, edit, validate: errors")
struct ResumeCommandErrorTests {
  /// A resumable blob, for the arguments that fail before it is read.
  static let v2 = resumeFixturePath("v2.xml.plist")

  @Test(
    "Usage errors name the problem, point at the subcommand's help and exit 64",
    arguments: [
      (["repair", v2, "-o", "-"], "repair needs --target T"),
      (
        ["repair", v2, "--target", "ios9", "-o", "-"],
        "unknown target 'ios9'; valid targets: ios10.0-10.1, ios10.2-10.3, ios11.0-11.2, ios11.3+, ios12, ios13+, network-framework, linux, macos10.12-10.12.1, macos10.12.2-10.12.6, macos10.13-10.13.3, macos10.13.4+, macos10.14, macos10.15+"
      ),
      (["repair", v2, "--target", "ios12"], "repair needs -o OUT (or -o - for standard output)"),
      (
        ["repair", "--target", "ios12", "-o", "-"], "repair needs a FILE (or - for standard input)"
      ),
      (["repair", v2, v2, "--target", "ios12", "-o", "-"], "repair takes one FILE"),
      (["repair", v2, "--target"], "--target needs a value"),
      (["convert", v2, "-o", "-"], "convert needs --to GEN"),
      (
        ["convert", v2, "--to", "v3", "-o", "-"],
        "--to must be one of v1, v2, v4, keyed, network-framework, network-framework-webkit, safari, not 'v3'"
      ),
      (
        ["convert", v2, "--to", "keyed", "--format", "json", "-o", "-"],
        "--format must be xml or binary, not 'json'"
      ),
      (
        ["convert", v2, "--to", "keyed", "--info-version", "five", "-o", "-"],
        "--info-version must be a whole number, not 'five'"
      ),
      (["convert", v2, "--to", "keyed"], "convert needs -o OUT (or -o - for standard output)"),
      (["edit", v2, "-o", "-"], "edit needs at least one of --url, --header or --remove-header"),
      (
        ["edit", v2, "-o", "-", "--header", "X-Token"],
        "--header must be 'Name: value', not 'X-Token'"
      ),
      (
        ["edit", v2, "-o", "-", "--header", ": abc"], "--header must be 'Name: value', not ': abc'"
      ),
      (
        ["edit", v2, "-o", "-", "--header", "X Token: abc"],
        "\"X Token\" is not an HTTP header name"
      ),
      (
        ["edit", v2, "-o", "-", "--url", "ftp://example.com/a.zip"],
        "\"ftp://example.com/a.zip\" is not an absolute http or https URL"
      ),
      (
        ["edit", v2, "--url", "https://example.com/"],
        "edit needs -o OUT (or -o - for standard output)"
      ),
      (["validate"], "validate needs a FILE (or - for standard input)"),
      (
        ["validate", v2, "--target", "ios14"],
        "unknown target 'ios14'; valid targets: ios10.0-10.1, ios10.2-10.3, ios11.0-11.2, ios11.3+, ios12, ios13+, network-framework, linux, macos10.12-10.12.1, macos10.12.2-10.12.6, macos10.13-10.13.3, macos10.13.4+, macos10.14, macos10.15+"
      ),
      (["validate", v2, "--bogus"], "unknown option '--bogus'"),
      (["convert", "", "--to", "keyed", "-o", "-"], "an empty string is not a FILE"),
      (
        ["repair", v2, "--target", "ios12", "--output", ""],
        "--output needs a path, not an empty string"
      ),
      (["validate", v2, "--temp-dir", ""], "--temp-dir needs a path, not an empty string"),
    ] as [([String], String)])
  func usage(arguments: [String], message: String) {
    let (status, captured) = run(arguments)
    #expect(status == .usage)
    #expect(captured.standardOutput.isEmpty)
    #expect(
      captured.standardError
        == "Error: \(message)\nRun 'resumedata \(arguments[0]) --help' for usage.\n")
  }

  @Test(
    "A missing file exits 66 and a truncated one 65, naming the file",
    arguments: [
      ["repair", "--target", "linux"], ["convert", "--to", "keyed"],
      ["edit", "--url", "https://example.com/b.zip"],
    ])
  func unreadableAndMalformed(command: [String]) throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let output = try scratch.write(Data("existing".utf8), to: "out")
    let missing = run(command + ["/nonexistent/blob", "-o", output])
    #expect(missing.0 == .unreadableInput)
    #expect(missing.1.standardError == "Error: /nonexistent/blob: no such file\n")
    #expect(missing.1.standardOutput.isEmpty)
    let truncated = run(command + ["-", "-o", output], input: try truncatedBlob())
    #expect(truncated.0 == .malformedInput)
    #expect(
      truncated.1.standardError
        == "Error: -:@974: trailer offset size 101 is not 1 to 8 bytes"
        + " (no trailer in the last 32 bytes: a file cut short?)\n")
    #expect(truncated.1.standardOutput.isEmpty)
    #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == Data("existing".utf8))
  }

  @Test("An output that cannot be written exits 1 and prints no findings")
  func unwritable() throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let output = scratch.path("missing/out.plist")
    let (status, captured) = run([
      "repair", Self.v2, "--target", "linux", "-o", output,
    ])
    #expect(status == .failure)
    #expect(captured.standardOutput.isEmpty)
    #expect(captured.standardError.hasPrefix("Error: \(output): cannot write: "))
    #expect(!FileManager.default.fileExists(atPath: output))
  }

  @Test("Each new subcommand has help on standard output, listed in the tool's help")
  func help() {
    let tool = text(run(["--help"]).1.standardOutput)
    for command in ["repair", "convert", "edit", "validate"] {
      let (status, captured) = run([command, "-h"])
      #expect(status == .success)
      #expect(captured.standardError == "")
      #expect(text(captured.standardOutput).hasPrefix("OVERVIEW: "))
      #expect(text(captured.standardOutput).contains("\nUSAGE: resumedata \(command) FILE|"))
      #expect(tool.contains("\n  \(command) "), "\(command)")
    }
  }
}

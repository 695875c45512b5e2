import Foundation
import TestSupport
import Testing

@testable import ResumeDataCLI

/// The version's one place (`ResumeDataTool.version`, Version.swift), what `--version` prints, and
/// the heading of CHANGELOG.md that a release dates (docs/releasing.md).
@Suite("Version")
struct VersionTests {
  @Test("--version prints the version, in the process and from the built executable")
  func printed() throws {
    let expected = "resumedata \(ResumeDataTool.version)\n"
    let (status, captured) = run(["--version"])
    #expect(status == .success)
    #expect(String(decoding: captured.standardOutput, as: UTF8.self) == expected)
    #expect(captured.standardError == "")

    let (exitStatus, output, error) = try runExecutable(["--version"])
    #expect(exitStatus == 0)
    #expect(String(decoding: output, as: UTF8.self) == expected)
    #expect(error == "")
  }

  @Test("The version is MAJOR.MINOR.PATCH, with -dev between releases")
  func versionShape() {
    // Each number without a leading zero, as Semantic Versioning has it.
    let shape = /(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-dev)?/
    #expect(ResumeDataTool.version.wholeMatch(of: shape) != nil)
  }

  @Test("CHANGELOG.md's first version heading is the version's: unreleased for -dev, else dated")
  func changelog() throws {
    let text = try String(
      contentsOf: repositoryRoot.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
    let heading = text.split(separator: "\n").first { $0.hasPrefix("## ") }.map(String.init)
    let version = ResumeDataTool.version
    if version.hasSuffix("-dev") {
      #expect(heading == "## \(version.dropLast(4)) — unreleased")
    } else {
      let dated = try #require(heading?.wholeMatch(of: /## (.+) — (\d{4}-\d{2}-\d{2})/))
      #expect(dated.1 == version)
    }
  }
}

import Foundation
import ResumeData

/// `resumedata repair FILE|- --target T -o OUT|- [--temp-dir DIR] [--json]`: a blob repaired for
/// the system that will resume it.
enum RepairCommand {
  /// The text `resumedata repair --help` prints.
  static let help = """
    OVERVIEW: Repair a resume blob for the system that will resume it.

    Converts the blob to a form that system reads, and works around that system's bugs
    (ByteRange on iOS 11.0-11.2, the request layout iOS 10.0-10.1 reads back, a missing
    original request, a LocalPath into an old sandbox, a byte count that disagrees with
    the partial file). Prints what changed, one finding a line ("no changes needed" when
    nothing did). A blob no system can resume (the empty blob of iOS 12.0-12.2) is
    refused: its findings are printed, nothing is written, and the exit status is 1.

    USAGE: resumedata repair FILE|- --target T -o OUT|- [--temp-dir DIR] [--json]

    ARGUMENTS:
      FILE|-            The blob to read; - reads standard input.

    OPTIONS:
      --target T        The system that will resume the blob (required): ios10.0-10.1,
                        ios10.2-10.3, ios11.0-11.2, ios11.3+, ios12, ios13+,
                        network-framework, linux; or by macOS release: macos10.12-10.12.1,
                        macos10.12.2-10.12.6, macos10.13-10.13.3, macos10.13.4+,
                        macos10.14, macos10.15+.
      -o, --output OUT  Where to write the blob (required); - is standard output, and the
                        findings then go to standard error. A file is replaced atomically,
                        never left half written.
      --temp-dir DIR    The directory that holds the partial file: enables the repairs
                        that look at its size or move a LocalPath into it.
      --json            Print the findings as one JSON object (see docs/cli/repair.md).
      -h, --help        Show this help.

    EXIT STATUS:
      0 written, 1 refused or not writable, 64 usage error, 65 malformed blob,
      66 unreadable file.

    EXAMPLES:
      resumedata repair Fixtures/resume/v4-byte-range.xml.plist --target ios11.0-11.2 \\
          -o repaired.plist
      resumedata repair Fixtures/resume/keyed-v4.archive --target ios10.0-10.1 \\
          -o repaired.plist --json

    """

  /// The entry of `repair` in the command table.
  static let spec = CommandSpec(
    name: "repair", summary: "Repair a resume blob for the system that will resume it.",
    help: help,
    options: [
      .option("--target", value: .targets), .option("-o", "--output", value: .file),
      .option("--temp-dir", value: .directory), .flag("--json"),
    ],
    arguments: .file, run: run(_:streams:))

  /// Runs `resumedata repair` with the arguments after its name.
  static func run(_ arguments: [String], streams: Streams) throws(CommandError) {
    guard
      let parsed = try Arguments.command(arguments, spec: spec, streams: streams)
    else { return }
    guard let name = parsed.value("--target") else { throw .usage("repair needs --target T") }
    let target = try ResumeInput.target(name)
    let output = try BlobOutput(parsed, command: "repair")
    let (path, resume) = try parsed.readResumeData(for: "repair", streams: streams)
    let result: RepairResult
    do {
      result = try resume.repaired(for: target, temporaryDirectory: parsed.temporaryDirectory)
    } catch {
      throw .operation(error, file: path)
    }
    try output.finish(
      result.blob, findings: result.findings, input: path,
      refusal: "the blob cannot be resumed on \(target.rawValue); nothing was written",
      streams: streams)
  }
}

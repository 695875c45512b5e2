import Foundation
import PropertyList
import ResumeData

/// `resumedata convert FILE|- --to GEN -o OUT|- [--format xml|binary] [--info-version N]
/// [--temp-dir DIR] [--json]`: a blob in another generation.
enum ConvertCommand {
  /// The text `resumedata convert --help` prints.
  static let help = """
    OVERVIEW: Convert a resume blob to another generation.

    Keeps everything the target can carry: the URL, the byte count, the validators, the
    partial file (named as the target names it) and both requests. Prints what was
    converted, derived from another value or left out, one finding a line ("no changes
    needed" when the blob already is in that form). A conversion that cannot be done (a
    partial-file path the target needs but the blob cannot give) fails with exit status
    1 and writes nothing.

    USAGE: resumedata convert FILE|- --to GEN -o OUT|- [--format xml|binary]
                              [--info-version N] [--temp-dir DIR] [--json]

    ARGUMENTS:
      FILE|-            The blob to read; - reads standard input.

    OPTIONS:
      --to GEN          The generation to write (required): v1, v2, v4, keyed,
                        network-framework, network-framework-webkit, safari.
      --format FORMAT   xml or binary; by default XML for v1, v2 and v4, binary for the
                        archives. Network.framework blobs are binary only (WebKit's
                        wrapper around one can be XML).
      --info-version N  The NSURLSessionResumeInfoVersion of a keyed blob (default 5; 4
                        is what iOS 12 wrote). v1, v2 and v4 always get their own.
      --temp-dir DIR    The directory that holds the partial file: turns a bare file
                        name into the absolute path v1, Safari and WebKit blobs need.
      -o, --output OUT  Where to write the blob (required); - is standard output, and the
                        findings then go to standard error. A file is replaced atomically,
                        never left half written.
      --json            Print the findings as one JSON object (see docs/cli/convert.md).
      --input-form F    How FILE holds the blob: raw (its own bytes), base64, hex or
                        description (what NSLog prints); without it the form is
                        told from the input (docs/captured-forms.md).
      -h, --help        Show this help.

    EXIT STATUS:
      0 written, 1 the conversion cannot be done or the output not written,
      64 usage error, 65 malformed blob, 66 unreadable file.

    EXAMPLES:
      resumedata convert Fixtures/resume/keyed-v5-response.archive --to v2 -o v2.plist
      resumedata convert Fixtures/resume/v2.xml.plist --to keyed --info-version 4 \\
          -o keyed.archive
      resumedata convert Fixtures/resume/v2.binary.plist --to v1 \\
          --temp-dir /var/tmp/partials -o v1.plist --json

    """

  /// The entry of `convert` in the command table.
  static let spec = CommandSpec(
    name: "convert", summary: "Convert a resume blob to another generation.", help: help,
    options: [
      .option("--to", value: .generations), .option("--format", value: .choice(["xml", "binary"])),
      .option("--info-version", value: .number), .option("--temp-dir", value: .directory),
      .option("-o", "--output", value: .file), .flag("--json"), ResumeInput.inputFormOption,
    ],
    arguments: .file, run: run(_:streams:))

  /// Runs `resumedata convert` with the arguments after its name.
  static func run(_ arguments: [String], streams: Streams) throws(CommandError) {
    guard
      let parsed = try Arguments.command(arguments, spec: spec, streams: streams)
    else { return }
    guard let name = parsed.value("--to") else { throw .usage("convert needs --to GEN") }
    let (generation, format, infoVersion) = try parsed.conversion(to: name)
    let output = try BlobOutput(parsed, command: "convert", streams: streams)
    let (path, resume, captured) = try parsed.readResumeData(for: "convert", streams: streams)
    let converted: (blob: ResumeData, findings: [Finding])
    do {
      converted = try resume.converted(
        to: generation, format: format, infoVersion: infoVersion,
        temporaryDirectory: parsed.temporaryDirectory)
    } catch {
      throw .operation(error, file: path)
    }
    try output.finish(
      converted.blob, findings: ResumeInput.findings(captured) + converted.findings, input: path,
      streams: streams)
  }
}

import Foundation
import PropertyList
import ResumeData

/// `resumedata convert FILE|- --to GEN -o OUT|- [--format xml|binary] [--info-version N]
/// [--temp-dir DIR] [--json]`: a blob in another generation.
enum ConvertCommand {
  /// The text `resumedata convert --help` prints.
  static let help = """
    USAGE: resumedata convert FILE|- --to GEN -o OUT|- [--format xml|binary]
                              [--info-version N] [--temp-dir DIR] [--json]

    Converts a resume blob to another generation, keeping everything the target can
    carry: the URL, the byte count, the validators, the partial file (named as the
    target names it) and both requests. Prints what was converted, derived from another
    value or left out, one finding a line ("no changes needed" when the blob already is
    in that form). A conversion that cannot be done (a partial-file path the target
    needs but the blob cannot give) fails with exit status 1 and writes nothing.

    ARGUMENTS:
      FILE|-            The blob to read; - reads standard input.

    OPTIONS:
      --to GEN          The generation to write (required): v1, v2, v4, keyed,
                        network-framework, network-framework-webkit, safari.
      --format FORMAT   xml or binary; by default XML for v1, v2 and v4, binary for the
                        archives. Network.framework blobs are binary only.
      --info-version N  The NSURLSessionResumeInfoVersion of a keyed blob (default 5; 4
                        is what iOS 12 wrote). v1, v2 and v4 always get their own.
      --temp-dir DIR    The directory that holds the partial file: turns a bare file
                        name into the absolute path v1, Safari and WebKit blobs need.
      -o, --output OUT  Where to write the blob (required); - is standard output, and the
                        findings then go to standard error. A file is replaced atomically,
                        never left half written.
      --json            Print the findings as one JSON object (see README.md).
      -h, --help        Show this help.

    """

  /// Runs `resumedata convert` with the arguments after its name.
  static func run(_ arguments: [String], streams: Streams) throws(CommandError) {
    guard
      let parsed = try Arguments.command(
        arguments, help: help,
        options: ["--to", "--format", "--info-version", "--temp-dir", "-o", "--output"],
        flags: ["--json"], streams: streams)
    else { return }
    guard let name = parsed.value("--to") else { throw .usage("convert needs --to GEN") }
    let (generation, format, infoVersion) = try parsed.conversion(to: name)
    let output = try BlobOutput(parsed, command: "convert")
    let (path, resume) = try parsed.readResumeData(for: "convert", streams: streams)
    let converted: (blob: ResumeData, findings: [Finding])
    do {
      converted = try resume.converted(
        to: generation, format: format, infoVersion: infoVersion,
        temporaryDirectory: parsed.temporaryDirectory)
    } catch {
      throw .operation(error, file: path)
    }
    try output.finish(
      converted.blob, findings: converted.findings, input: path, streams: streams)
  }
}

import Foundation
import ResumeData

/// `resumedata edit FILE|- -o OUT|- [--url URL] [--header 'Name: value']... [--remove-header
/// Name]... [--json]`: a blob pointed at a new URL or sending other headers.
enum EditCommand {
  /// The text `resumedata edit --help` prints.
  static let help = """
    OVERVIEW: Point a resume blob at a new URL, or change its request headers.

    Edits a resume blob in its own generation and container: points it at a new URL
    (NSURLSessionDownloadURL and the URL of both requests), or adds, replaces or removes
    a header field of both requests. Everything else stays as it is. Edits apply in the
    order given; at least one is needed. Prints what changed, one finding a line ("no
    changes needed" when nothing did). Network.framework blobs, bare or in WebKit's
    wrapper, cannot be edited (exit status 1): convert them first.

    USAGE: resumedata edit FILE|- -o OUT|- [--url URL] [--header 'Name: value']...
                           [--remove-header Name]... [--json]

    ARGUMENTS:
      FILE|-            The blob to read; - reads standard input.

    OPTIONS:
      --url URL         The new URL: absolute, http or https.
      --header 'Name: value'
                        Adds the header, or replaces one of that name (matched without
                        regard to case, keeping its place). The first colon ends the
                        name; one space after it is not part of the value. Repeatable.
      --remove-header Name
                        Removes the header of that name (without regard to case), any
                        name: also one that cannot be sent. Repeatable.
      -o, --output OUT  Where to write the blob (required); - is standard output, and the
                        findings then go to standard error. A file is replaced atomically,
                        never left half written.
      --json            Print the findings as one JSON object (see docs/cli/edit.md).
      --input-form F    How FILE holds the blob: raw (its own bytes), base64, hex or
                        description (what NSLog prints); without it the form is
                        told from the input (docs/captured-forms.md).
      -h, --help        Show this help.

    EXIT STATUS:
      0 written, 1 the blob cannot be edited or the output not written, 64 usage error
      (an invalid URL or header name too), 65 malformed blob, 66 unreadable file.

    EXAMPLES:
      resumedata edit Fixtures/resume/v2.xml.plist \\
          --url https://mirror.example.net/files/archive.zip -o edited.plist
      resumedata edit Fixtures/resume/keyed-v5-response.archive \\
          --header 'Authorization: Bearer t0k3n' -o edited.archive --json

    """

  /// The entry of `edit` in the command table.
  static let spec = CommandSpec(
    name: "edit", summary: "Point a resume blob at a new URL, or change its request headers.",
    help: help,
    options: [
      .option("--url", value: .url), .option("--header", value: .text, repeatable: true),
      .option("--remove-header", value: .text, repeatable: true),
      .option("-o", "--output", value: .file), .flag("--json"), ResumeInput.inputFormOption,
    ],
    arguments: .file, run: run(_:streams:))

  /// One edit of the command line.
  private enum Edit {
    case url(String)
    case header(name: String, value: String?)
  }

  /// Runs `resumedata edit` with the arguments after its name.
  static func run(_ arguments: [String], streams: Streams) throws(CommandError) {
    let editOptions: Set<String> = ["--url", "--header", "--remove-header"]
    guard
      let parsed = try Arguments.command(arguments, spec: spec, streams: streams)
    else { return }
    let edits = try parsed.occurrences(of: editOptions).map { (option) throws(CommandError) in
      try edit(option.name, option.value)
    }
    guard !edits.isEmpty else {
      throw .usage("edit needs at least one of --url, --header or --remove-header")
    }
    let output = try BlobOutput(parsed, command: "edit", streams: streams)
    let (path, decoded, captured) = try parsed.readResumeData(for: "edit", streams: streams)
    var resume = decoded
    var findings = ResumeInput.findings(captured)
    do {
      for edit in edits {
        switch edit {
        case .url(let url): findings += try resume.setURL(url)
        case .header(let name, let value): findings += try resume.setHeader(name, value)
        }
      }
    } catch {
      throw .operation(error, file: path)
    }
    try output.finish(resume, findings: findings, input: path, streams: streams)
  }

  /// The edit an option asks for; a `--header` without a colon, or with nothing before it, is a
  /// usage error. (Whether the name is an HTTP token, or the value free of line breaks, is the
  /// library's check.)
  private static func edit(_ option: String, _ value: String) throws(CommandError) -> Edit {
    switch option {
    case "--url":
      return .url(value)
    case "--remove-header":
      return .header(name: value, value: nil)
    default:
      guard let colon = value.firstIndex(of: ":"), colon != value.startIndex else {
        throw .usage("--header must be 'Name: value', not '\(value)'")
      }
      var headerValue = value[value.index(after: colon)...]
      if headerValue.first == " " { headerValue = headerValue.dropFirst() }
      return .header(name: String(value[..<colon]), value: String(headerValue))
    }
  }
}

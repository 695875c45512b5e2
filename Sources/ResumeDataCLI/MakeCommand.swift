import Downloader
import Foundation
import KeyedArchive
import ResumeData

/// `resumedata make URL --partial FILE …`: the resume data a system would have written for a
/// partial file already on disk, once the file's last bytes are checked against the server.
enum MakeCommand {
  /// The text `resumedata make --help` prints.
  static let help = """
    OVERVIEW: Make the resume data a system would have written for a partial file.

    Makes the blob that SYSTEM's URLSession (or this toolkit's downloader) would have
    written for FILE, the first bytes of URL kept by an app or another downloader (a
    .part or .incomplete file and its ETag), so that downloadTask(withResumeData:)
    continues it. Before stamping a validator on bytes it did not fetch, it checks them:
    it probes URL (refusing a server SYSTEM cannot resume from), then fetches the last
    bytes of FILE's range with Range and If-Range = the validator and compares them with
    FILE's end, refusing on a mismatch, a 200 (the file changed) or a file longer than
    the server's. The findings say where FILE must go (NSTemporaryDirectory(), under the
    blob's TempFileName). Only those last bytes are compared: an earlier difference
    cannot be seen without fetching the whole range.

    USAGE: resumedata make URL --partial FILE --for SYSTEM -o OUT|-
                             [--etag E | --last-modified D | --trust-server-validator]
                             [--header 'Name: value']... [--temp-name NAME]
                             [--temp-dir DIR] [--timeout SECONDS] [--json]

    ARGUMENTS:
      URL               The http or https URL the bytes came from (the stable one: a
                        redirect to a signed URL is followed again on resume).

    OPTIONS:
      --partial FILE    The partial file: the first bytes of URL's file.
      --for SYSTEM      The system that will resume: ios10.0-10.1 … ios13+,
                        network-framework, linux (this toolkit), or a macOS release.
      -o, --output OUT  Where the blob goes (- for standard output), replaced atomically.
      --etag E          The ETag FILE's bytes belong to, quotes included.
      --last-modified D The Last-Modified date they belong to.
      --trust-server-validator
                        Without --etag or --last-modified: take the server's current
                        validator (FILE's last bytes are still compared under it).
      --header 'Name: value'
                        A header field of the requests, in the blob and in the checks
                        (repeatable).
      --temp-name NAME  The blob's TempFileName (default: CFNetworkDownload_XXXXXX.tmp as
                        CFNetwork makes them; for linux, FILE's own name).
      --temp-dir DIR    The directory the file will be in on the target (the app's
                        NSTemporaryDirectory()), for forms that name it by path
                        (network-framework's fileURL).
      --timeout SECONDS The time the probe, and then the check, may take (default: 30).
      --json            Print {"schemaVersion": 1, "input", "output", "written",
                        "generation", "container", "infoVersion", "findings"} instead of
                        the findings' lines (see docs/cli/make.md).
      -h, --help        Show this help.

    EXIT STATUS:
      0 made, 1 refused (a finding says why; nothing is written), 64 usage error,
      66 FILE unreadable, or no answer from the server.

    EXAMPLES:
      resumedata make https://example.com/model.bin --partial model.bin.part \\
          --etag '"5f3a-1c9"' --for ios13+ -o model.resumedata
      resumedata make https://example.com/model.bin --partial model.bin.incomplete \\
          --trust-server-validator --for linux -o model.resumedata --json

    """

  /// The entry of `make` in the command table.
  static let spec = CommandSpec(
    name: "make", summary: "Make the resume data a system would have written for a partial file.",
    help: help,
    options: [
      .option("--partial", value: .file), .option("--for", value: .targets),
      .option("-o", "--output", value: .file), .option("--etag", value: .text),
      .option("--last-modified", value: .text), .flag("--trust-server-validator"),
      .option("--header", value: .text, repeatable: true), .option("--temp-name", value: .text),
      .option("--temp-dir", value: .directory), .option("--timeout", value: .number),
      .flag("--json"),
    ],
    arguments: .url, run: run(_:streams:))

  /// Runs `resumedata make`.
  static func run(_ arguments: [String], streams: Streams) throws(CommandError) {
    guard let parsed = try Arguments.command(arguments, spec: spec, streams: streams) else {
      return
    }
    guard parsed.positionals.count == 1 else { throw .usage("make needs one URL") }
    let url = try ProbeCommand.httpURL(parsed.positionals[0])
    guard let partialPath = parsed.value("--partial") else {
      throw .usage("make needs --partial FILE (the partial file)")
    }
    guard let name = parsed.value("--for") else { throw .usage("make needs --for SYSTEM") }
    guard let target = RepairTarget(name: name) else {
      throw .usage(
        "unknown system '\(name)'" + Suggestions.hint(for: name, in: RepairTarget.names))
    }
    let output = try BlobOutput(parsed, command: "make", streams: streams)
    let headers = try ProbeCommand.headers(parsed)
    let timeout = try ProbeCommand.timeout(parsed)
    let given = try givenValidator(parsed)
    let tempName = parsed.value("--temp-name")
    if let tempName, !ResumeData.isSafeBareName(tempName) {
      throw .usage("--temp-name needs a bare file name, not '\(tempName)'")
    }
    let temporaryDirectory = parsed.value("--temp-dir").map {
      URL(fileURLWithPath: $0, isDirectory: true)
    }
    let (size, tail) = try readTail(partialPath)
    guard given != nil || parsed.has("--trust-server-validator") else {
      let reason = Finding(
        "validator-not-given", .error,
        "no validator given: give the ETag (--etag) or Last-Modified date (--last-modified) recorded when the bytes were fetched, or --trust-server-validator to take the server's current one (the file's last bytes are compared under it)"
      )
      try output.finish(
        nil, findings: [reason], input: partialPath, refusal: "\(reason.code): no blob made",
        streams: streams)
      return
    }
    // What the server allows, judged for the client that will resume.
    var options = ProbeOptions()
    options.headers = headers
    options.requests = 2
    options.timeout = timeout
    let report = try ProbeCommand.probe(url, options: options)
    let consumer: ProbeConsumer =
      switch target {
      case .networkFramework: .networkFramework
      case .linux: .resumedata
      default: .apple
      }
    var findings = [Finding]()
    // The blob names the URL given, so a signed URL the redirects lead to is asked for again.
    if let verdict = report.verdict(consumer),
      verdict.outcome != .resumes && verdict.outcome != .resumesUntilExpiry
    {
      let reason = Finding(
        "server-cannot-resume", .error,
        "the server does not let \(verdict.consumer.title) resume: it \(verdict.summary) (\(verdict.reasons.joined(separator: ", ")))"
      )
      try output.finish(
        nil, findings: [reason] + report.findings, input: partialPath,
        refusal: "\(reason.code): no blob made", streams: streams)
      return
    }
    let validator: (entityTag: String?, lastModified: String?)
    if let given {
      validator = given
    } else {
      let answer =
        consumer == .resumedata
        ? report.first : report.responses.first { $0.kind == .defaultEncoding } ?? report.first
      let entityTag =
        consumer == .resumedata
        ? answer?.entityTag.flatMap { $0.hasPrefix("W/") ? nil : $0 }
        : answer?.entityTag
      validator = (entityTag, answer?.lastModified)
      let taken =
        entityTag.map { "ETag \($0)" } ?? validator.lastModified.map { "Last-Modified \($0)" }
      findings.append(
        Finding(
          "validator-from-server", .info,
          "the validator is the server's current one, \(taken ?? "none"): the partial file is taken to belong to it"
        ))
    }
    guard let sent = validator.entityTag ?? validator.lastModified else {
      let reason = Finding(
        "server-cannot-resume", .error, "the server gives no validator to stamp on the bytes")
      try output.finish(
        nil, findings: [reason], input: partialPath, refusal: "\(reason.code): no blob made",
        streams: streams)
      return
    }
    let check = try verify(
      url: url, headers: headers, validator: sent, size: size, tail: tail, timeout: timeout)
    findings.append(check.finding)
    guard check.matches else {
      try output.finish(
        nil, findings: findings, input: partialPath,
        refusal: "\(check.finding.code): no blob made", streams: streams)
      return
    }
    let partialURL = URL(fileURLWithPath: partialPath)
    let partial = PartialDownload(
      url: url.absoluteString, bytes: size, entityTag: validator.entityTag,
      lastModified: validator.lastModified,
      headerFields: headers.map { URLRequestFields.Header($0.name, $0.value) },
      tempFileName: tempName
        ?? (target == .linux ? partialURL.lastPathComponent : ResumeData.newTempFileName()))
    let made: PartialFileResume
    do {
      made = try ResumeData.forPartialFile(
        partial, on: target,
        temporaryDirectory: temporaryDirectory
          ?? (target == .linux ? partialURL.deletingLastPathComponent() : nil))
    } catch {
      throw .usage(error.message)
    }
    switch made {
    case .resume(let blob, let more):
      try output.finish(blob, findings: findings + more, input: partialPath, streams: streams)
    case .refused(let reason, let more):
      try output.finish(
        nil, findings: findings + more, input: partialPath,
        refusal: "\(reason.code): no blob made", streams: streams)
    }
  }

  /// `--etag` or `--last-modified`, checked; nil when neither is given.
  private static func givenValidator(_ parsed: Arguments) throws(CommandError) -> (
    entityTag: String?, lastModified: String?
  )? {
    let tag = parsed.value("--etag")
    let date = parsed.value("--last-modified")
    if tag != nil, date != nil {
      throw .usage("give --etag or --last-modified, not both (CFNetwork sends the ETag alone)")
    }
    if tag != nil || date != nil, parsed.has("--trust-server-validator") {
      throw .usage("--trust-server-validator takes the server's validator: give no other")
    }
    for (option, value) in [("--etag", tag), ("--last-modified", date)] {
      guard let value else { continue }
      if value.isEmpty || !URLRequestFields.Header.isSendable(name: "If-Range", value: value) {
        throw .usage("\(option) needs a value that can be sent as If-Range")
      }
    }
    if let tag,
      !(tag.hasPrefix("\"") || tag.hasPrefix("W/\"")) || !tag.hasSuffix("\"")
        || tag.count < 2
    {
      throw .usage("--etag needs the ETag as the server sent it, quotes included ('\"…\"')")
    }
    if tag == nil, date == nil { return nil }
    return (tag, date)
  }

  /// The partial file's size and its last bytes (at most 64 KiB); exit 66 when it cannot be
  /// read, 1 when it is empty.
  static func readTail(_ path: String) throws(CommandError) -> (Int64, Data) {
    var status = stat()
    guard stat(path, &status) == 0 else {
      throw CommandError(
        .unreadableInput, "cannot read: \(String(cString: strerror(errno)))", file: path)
    }
    guard status.st_mode & S_IFMT == S_IFREG else {
      throw CommandError(.unreadableInput, "cannot read: not a regular file", file: path)
    }
    let size = Int64(status.st_size)
    guard size > 0 else {
      throw CommandError(
        .failure, "the partial file is empty: there is nothing to resume", file: path)
    }
    let count = Int(min(size, 65_536))
    do {
      let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
      defer { try? handle.close() }
      try handle.seek(toOffset: UInt64(size) - UInt64(count))
      let tail = try handle.read(upToCount: count) ?? Data()
      guard tail.count == count else {
        throw CommandError(.unreadableInput, "the file shrank while it was read", file: path)
      }
      return (size, tail)
    } catch let error as CommandError {
      throw error
    } catch {
      throw CommandError(.unreadableInput, "cannot read: \(error.localizedDescription)", file: path)
    }
  }

  /// `TailCheck.verify`, waited for; no answer is exit 66.
  private static func verify(
    url: URL, headers: [(name: String, value: String)], validator: String, size: Int64,
    tail: Data, timeout: Duration
  ) throws(CommandError) -> TailCheck {
    switch TailCheck.verifySynchronously(
      url: url, headers: headers, validator: validator, size: size, tail: tail, timeout: timeout)
    {
    case .success(let check): return check
    case .failure(let error):
      throw CommandError(.unreadableInput, error.message, file: url.absoluteString)
    }
  }
}

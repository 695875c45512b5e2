import Foundation
import ResumeData

/// Where `repair`, `convert` and `edit` put the blob they make and their report of what changed:
/// the blob to `-o OUT` (atomically) or to standard output for `-o -`; the report (findings as
/// text lines or one JSON object) to standard output, or to standard error when the blob takes
/// standard output.
struct BlobOutput {
  /// Where the blob goes; `-` is standard output.
  let path: String
  /// Whether the report is JSON.
  let json: Bool
  /// Whether the blob goes to standard output: `-`, or a name for the file it is
  /// (`/dev/stdout`), so that the report goes to standard error instead of over the blob.
  let toStandardOutput: Bool

  /// The output of `command`, whose `-o` is required: checked before any input is read, so that a
  /// wrong command line fails as a usage error.
  init(_ parsed: Arguments, command: String, streams: Streams) throws(CommandError) {
    guard let path = parsed.output else {
      throw .usage("\(command) needs -o OUT (or -o - for standard output)")
    }
    self.path = path
    json = parsed.has("--json")
    toStandardOutput = streams.writesToStandardOutput(path)
  }

  /// Writes `blob` and reports `findings`. A nil blob (a repair refused it) writes nothing: the
  /// findings are reported and the command fails with `refusal`, exit status 1. Nothing is written
  /// unless the whole blob encodes, and an existing file is replaced only by a complete one.
  func finish(
    _ blob: ResumeData?, findings: [Finding], input: String, refusal: String = "",
    streams: Streams
  ) throws(CommandError) {
    guard let blob else {
      report(nil, findings: findings, input: input, streams: streams)
      throw CommandError(.failure, refusal, file: input)
    }
    let bytes: Data
    do {
      bytes = try blob.encoded(keepingUntouchedBytes: true)
    } catch {
      throw .operation(error, file: input)
    }
    let textual: Set<ResumeDataContainer> = [.xmlPlist, .keyedArchiveXML]
    if toStandardOutput, streams.standardOutputIsTerminal, !textual.contains(blob.container) {
      throw .usage(
        "refusing to write a binary \(blob.container.rawValue) blob to a terminal; use -o FILE or redirect the output"
      )
    }
    try Files.write(bytes, to: path, streams: streams)
    report(blob, findings: findings, input: input, streams: streams)
  }

  private func report(_ blob: ResumeData?, findings: [Finding], input: String, streams: Streams) {
    let text: String
    if json {
      var object = JSONObject.document()
      object.add("input", string: input)
      object.add("output", string: path)
      object.add("written", blob == nil ? "false" : "true")
      object.add("generation", string: blob?.generation.rawValue)
      object.add("container", string: blob?.container.rawValue)
      object.add("infoVersion", blob?.infoVersion.map(String.init) ?? "null")
      object.add("findings", JSON.findings(findings, level: 1))
      text = object.rendered() + "\n"
    } else if findings.isEmpty {
      text = "no changes needed\n"
    } else {
      // The report goes where the blob does not: colour follows that stream.
      let style = toStandardOutput ? streams.errorStyle : streams.outputStyle
      text = findings.map { style.finding($0) + "\n" }.joined()
    }
    if toStandardOutput { streams.printError(text) } else { streams.print(text) }
  }
}

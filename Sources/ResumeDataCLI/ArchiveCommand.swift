import Foundation
import KeyedArchive
import PropertyList

/// `resumedata archive FILE|- [--json]`: prints a keyed archive's resolved object graph.
enum ArchiveCommand {
  /// The text `resumedata archive --help` prints.
  static let help = """
    OVERVIEW: Print a keyed archive's object graph, as text or JSON.

    Reads an NSKeyedArchiver archive (binary or XML) and prints its object graph from
    the root: each object once, with its UID (@N), its classes and its fields; later
    references to an object as "(shown above)", an object that contains itself as a
    cycle. Data is shown as its length and hex; data that is itself a keyed archive
    (the request archives inside resume data, say) is decoded too, marked as nested.

    USAGE: resumedata archive FILE|- [--json]

    ARGUMENTS:
      FILE|-            The archive to read; - reads standard input.

    OPTIONS:
      --json            Print JSON instead of text (see docs/cli/archive.md).
      -h, --help        Show this help.

    EXIT STATUS:
      0 printed, 64 usage error, 65 malformed archive, 66 unreadable file.

    EXAMPLES:
      resumedata archive Fixtures/archive/foundation/date.archive
      resumedata archive Fixtures/resume/keyed-v5-response.archive
      resumedata archive Fixtures/archive/request/get-22-slots.archive --json

    """

  /// The entry of `archive` in the command table.
  static let spec = CommandSpec(
    name: "archive", summary: "Print a keyed archive's object graph, as text or JSON.",
    help: help, options: [.flag("--json")], arguments: .file, run: run(_:streams:))

  static func run(_ arguments: [String], streams: Streams) throws(CommandError) {
    guard
      let parsed = try Arguments.command(arguments, spec: spec, streams: streams)
    else { return }
    let (path, input) = try parsed.readSingleFile(for: "archive", streams: streams)
    let archive: KeyedArchive
    do {
      archive = try KeyedArchive(decoding: input)
    } catch let error as KeyedArchiveError {
      throw .archive(error, file: path)
    } catch {
      throw CommandError(.failure, "\(error)", file: path)
    }
    let root = archive.resolve()
    if parsed.has("--json") {
      var out = "{\n  \"schemaVersion\": 1,\n  \"archiver\": "
      appendJSONString(archive.archiver ?? "", to: &out)
      out +=
        ",\n  \"format\": \"\(archive.format.rawValue)\",\n  \"objectCount\": \(archive.objects.count),\n"
      out += "  \"rootKey\": "
      appendJSONString(archive.rootKey, to: &out)
      out += ",\n  \"root\": " + root.json(indent: 1) + "\n}\n"
      streams.print(out)
    } else {
      let header =
        "\(archive.archiver ?? "keyed") archive, \(archive.format.rawValue), \(archive.objects.count) objects"
        + (archive.extraTopLevelKeys.isEmpty
          ? "" : ", extra top-level keys: " + archive.extraTopLevelKeys.joined(separator: ", "))
      streams.print(header + "\n" + root.text(label: archive.rootKey))
    }
  }
}

import Foundation
import PropertyList

/// `resumedata plist FILE|- [--to xml|binary|json|openstep] [-o OUT|-]`: converts any property
/// list.
enum PlistCommand {
  /// The text `resumedata plist --help` prints.
  static let help = """
    OVERVIEW: Convert a property list between XML, binary, OpenStep and typed JSON.

    Reads an XML, binary or OpenStep (old-style text, .strings) property list (the
    format is detected) and writes it in another format, exactly as CoreFoundation
    would. Converting a plist written by Apple to its own format gives back the same
    bytes. OpenStep text holds only strings, data, arrays and dictionaries: its bare
    42 reads as the string "42", as CoreFoundation reads it. A binary plist is not
    written to a terminal.

    USAGE: resumedata plist FILE|- [--to xml|binary|json|openstep] [--json] [-o OUT|-]

    ARGUMENTS:
      FILE|-            The property list to read; - reads standard input.

    OPTIONS:
      --to FORMAT       xml (default), binary, json: a typed JSON in which every value
                        keeps its plist type (see docs/cli/plist.md), or openstep: laid
                        out as NSLog prints a dictionary (numbers, booleans and dates
                        become text there, and read back as strings).
      --json            The same as --to json.
      -o, --output OUT  Where to write; - (the default) is standard output. A file is
                        replaced atomically, never left half written.
      -h, --help        Show this help.

    EXIT STATUS:
      0 written, 1 not writable (or a value the format cannot hold), 64 usage error,
      65 malformed input, 66 unreadable file.

    EXAMPLES:
      resumedata plist Fixtures/plist/resume-shaped.binary.plist
      resumedata plist Fixtures/plist/foundation-types.xml.plist --json
      resumedata plist Fixtures/resume/v2.xml.plist --to binary -o v2.binary.plist
      resumedata plist Fixtures/plist/animals.strings --json

    """

  /// The entry of `plist` in the command table.
  static let spec = CommandSpec(
    name: "plist",
    summary: "Convert a property list between XML, binary, OpenStep and typed JSON.",
    help: help,
    options: [
      .option("--to", value: .choice(["xml", "binary", "json", "openstep"])), .flag("--json"),
      .option("-o", "--output", value: .file),
    ],
    arguments: .file, run: run(_:streams:))

  static func run(_ arguments: [String], streams: Streams) throws(CommandError) {
    guard
      let parsed = try Arguments.command(arguments, spec: spec, streams: streams)
    else { return }
    if parsed.has("--json"), let other = parsed.value("--to"), other != "json" {
      throw .usage("--json and --to \(other) disagree")
    }
    let target = parsed.has("--json") ? "json" : parsed.value("--to") ?? "xml"
    guard ["xml", "binary", "json", "openstep"].contains(target) else {
      throw .usage("--to must be xml, binary, json or openstep, not '\(target)'")
    }
    let output = parsed.output ?? "-"
    if streams.writesToStandardOutput(output), target == "binary", streams.standardOutputIsTerminal
    {
      throw .usage(
        "refusing to write a binary plist to a terminal; use -o FILE or redirect the output")
    }
    let (path, input) = try parsed.readSingleFile(for: "plist", streams: streams)
    let converted: Data
    do {
      let (value, format) = try PropertyListValue.decodeAnyFormat(input)
      switch target {
      case "json":
        let json =
          "{\n  \"schemaVersion\": 1,\n  \"format\": \"\(format.rawValue)\",\n  \"value\": "
          + value.typedJSON(indent: 1) + "\n}\n"
        converted = Data(json.utf8)
      case "binary" where format == .binary:
        // Through the object table, so the sharing the writer chose (CoreFoundation's or
        // NSKeyedArchiver's) survives and an Apple-made file comes back byte for byte.
        // (A file whose unreferenced objects do not read is written afresh from its value.)
        converted =
          try (try? BinaryPropertyListObjectTable(reading: input))?.encoded()
          ?? value.encoded(as: .binary)
      case "binary":
        converted = try value.encoded(as: .binary)
      case "openstep":
        converted = OpenStepPropertyListWriter().write(value)
      default:
        converted = try value.encoded(as: .xml)
      }
    } catch let error as PropertyListError {
      throw .malformed(error, file: path)
    } catch {
      throw CommandError(.failure, "\(error)", file: path)
    }
    try Files.write(converted, to: output, streams: streams)
  }
}

import Foundation

/// The `resumedata` command-line tool, as a library so that tests can run it in-process.
public enum ResumeDataTool {
  /// The version printed by `--version`.
  public static let version = "0.1.0"

  static let help = """
    OVERVIEW: Inspect, validate, repair, convert and edit Apple URLSession resume data
    of every generation, and convert and print the property lists and keyed archives it
    is made of.

    USAGE: resumedata <subcommand> [options]

    SUBCOMMANDS:
      inspect           What is in a resume blob of any generation, and what is wrong with it.
      validate          Whether resume blobs can be resumed (on a given system).
      repair            Repair a resume blob for the system that will resume it.
      convert           Convert a resume blob to another generation.
      edit              Point a resume blob at a new URL, or change its request headers.
      batch             Diagnose, repair or convert NDJSON streams of resume blobs, on
                        every core, one result a record.
      plist             Convert a property list between XML, binary and typed JSON.
      archive           Print a keyed archive's object graph, as text or JSON.
      download          Download a URL with resume, writing Apple-compatible resume data.
      resume            Continue a download from resume data of any generation.
      downloads         List, add, run, pause, resume or cancel the downloads of a state
                        directory.

    OPTIONS:
      -h, --help        Show this help (or `resumedata <subcommand> --help`).
      --version         Show the version.

    EXIT STATUS:
      0 success, 64 usage error, 65 malformed input, 66 unreadable input,
      1 any other failure.

    """

  /// Runs the tool.
  ///
  /// - Parameters:
  ///   - arguments: the arguments after the program name.
  ///   - streams: where to read and write.
  /// - Returns: the exit status.
  public static func run(_ arguments: [String], streams: Streams = .process) -> ExitCode {
    do {
      return try dispatch(arguments, streams: streams)
    } catch {
      // An interruption has already said what it left behind.
      if error.exitCode != .interrupted { streams.printError(error.rendered) }
      if error.showsUsageHint {
        let subcommand =
          arguments.first.map { subcommands.contains($0) ? " \($0)" : "" } ?? ""
        streams.printError("Run 'resumedata\(subcommand) --help' for usage.")
      }
      return error.exitCode
    }
  }

  /// The subcommands, which each have their own `--help`.
  static let subcommands = [
    "inspect", "validate", "repair", "convert", "edit", "batch", "plist", "archive", "download",
    "resume",
    "downloads",
  ]

  /// Runs the subcommand named first; its exit status when it has one of its own (`validate`).
  private static func dispatch(_ arguments: [String], streams: Streams) throws(CommandError)
    -> ExitCode
  {
    guard let first = arguments.first else {
      streams.writeStandardError(Data(help.utf8))
      throw .usage("missing subcommand")
    }
    let rest = Array(arguments.dropFirst())
    switch first {
    case "-h", "--help", "help":
      streams.print(help)
    case "--version":
      streams.print("resumedata \(version)")
    case "plist":
      try PlistCommand.run(rest, streams: streams)
    case "archive":
      try ArchiveCommand.run(rest, streams: streams)
    case "inspect":
      try InspectCommand.run(rest, streams: streams)
    case "validate":
      return try ValidateCommand.run(rest, streams: streams)
    case "repair":
      return try RepairCommand.run(rest, streams: streams)
    case "convert":
      try ConvertCommand.run(rest, streams: streams)
    case "edit":
      try EditCommand.run(rest, streams: streams)
    case "batch":
      return try BatchCommand.run(rest, streams: streams)
    case "download":
      try DownloadCommand.download(rest, streams: streams)
    case "resume":
      try DownloadCommand.resume(rest, streams: streams)
    case "downloads":
      try DownloadsCommand.run(rest, streams: streams)
    default:
      throw .usage("unknown subcommand '\(first)'")
    }
    return .success
  }
}

import Foundation

/// The `resumedata` command-line tool, as a library so that tests can run it in-process.
public enum ResumeDataTool {
  /// Every subcommand, in the order the tool's help lists them: the one table that dispatch, the
  /// parser, help, suggestions and shell completions read. A new subcommand is one entry here.
  static let commands: [CommandSpec] = [
    InspectCommand.spec, ValidateCommand.spec, FindCommand.spec, RepairCommand.spec,
    ConvertCommand.spec,
    EditCommand.spec, BatchCommand.spec, PlistCommand.spec, ArchiveCommand.spec,
    DownloadCommand.downloadSpec,
    DownloadCommand.resumeSpec, DownloadsCommand.spec, ProbeCommand.spec, MakeCommand.spec,
    ExportCommand.spec, HelpCommand.spec,
    CompletionsCommand.spec,
  ]

  /// The options of the tool itself, before any subcommand.
  static let options: [OptionSpec] = [.help, .flag("--version")]

  /// The text `resumedata --help` and `resumedata help` print, its subcommands listed from the
  /// command table.
  static var help: String {
    let subcommands = commands.map { command in
      "  " + command.name.padding(toLength: 18, withPad: " ", startingAt: 0) + command.summary
    }
    return """
      OVERVIEW: Inspect, validate, repair, convert and edit Apple URLSession resume data
      of every generation, and convert and print the property lists and keyed archives it
      is made of.

      USAGE: resumedata <subcommand> [options]

      SUBCOMMANDS:
      \(subcommands.joined(separator: "\n"))

        See 'resumedata help <subcommand>' for a subcommand's help.

      OPTIONS:
        -h, --help        Show this help (or `resumedata <subcommand> --help`).
        --version         Show the version.

      EXIT STATUS:
        0 success, 64 usage error, 65 malformed input, 66 unreadable input,
        1 any other failure.

      EXAMPLES:
        resumedata inspect Fixtures/resume/v4-byte-range.xml.plist
        resumedata help repair
        resumedata completions bash > /etc/bash_completion.d/resumedata

      """
  }

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
      if error.exitCode != .interrupted {
        streams.printError(streams.errorStyle.error(error.rendered))
      }
      if error.showsUsageHint {
        let subcommand =
          arguments.first.map { command(named: $0) == nil ? "" : " \($0)" } ?? ""
        streams.printError("Run 'resumedata\(subcommand) --help' for usage.")
      }
      return error.exitCode
    }
  }

  /// The subcommand of that name in the command table.
  static func command(named name: String) -> CommandSpec? {
    commands.first { $0.name == name }
  }

  /// The subcommand of that name, or a usage error that suggests the closest name.
  static func knownCommand(_ name: String) throws(CommandError) -> CommandSpec {
    guard let command = command(named: name) else {
      throw .usage(
        "unknown subcommand '\(name)'" + Suggestions.hint(for: name, in: commands.map(\.name)))
    }
    return command
  }

  /// Runs the subcommand named first; its exit status when it has one of its own (`validate`).
  private static func dispatch(_ arguments: [String], streams: Streams) throws(CommandError)
    -> ExitCode
  {
    guard let first = arguments.first else {
      streams.writeStandardError(Data(help.utf8))
      throw .usage("missing subcommand")
    }
    switch first {
    case "-h", "--help":
      streams.print(help)
      return .success
    case "--version":
      streams.print("resumedata \(version)")
      return .success
    case _ where first.hasPrefix("-"):
      throw .usage(
        "unknown option '\(first)'"
          + Suggestions.hint(for: first, in: options.flatMap(\.names)))
    default:
      return try knownCommand(first).run(Array(arguments.dropFirst()), streams)
    }
  }
}

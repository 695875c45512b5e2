/// `resumedata help [SUBCOMMAND [ACTION]]`: the same help as `resumedata SUBCOMMAND --help`.
enum HelpCommand {
  /// The text `resumedata help --help` prints.
  static let help = """
    OVERVIEW: Show the help of the tool, of a subcommand or of one of its actions.

    Prints exactly what `resumedata SUBCOMMAND --help` (or `resumedata SUBCOMMAND ACTION
    --help`) prints; without a subcommand, the tool's own help.

    USAGE: resumedata help [SUBCOMMAND [ACTION]]

    ARGUMENTS:
      SUBCOMMAND        The subcommand whose help to show.
      ACTION            One of its actions (`downloads list`).

    OPTIONS:
      -h, --help        Show this help.

    EXIT STATUS:
      0 shown, 64 an unknown subcommand or action.

    EXAMPLES:
      resumedata help
      resumedata help inspect
      resumedata help downloads add

    """

  /// The entry of `help` in the command table.
  static let spec = CommandSpec(
    name: "help", summary: "Show the help of the tool or of a subcommand.", help: help,
    options: [], arguments: .subcommand, run: run(_:streams:))

  /// Runs `resumedata help` with the arguments after its name.
  static func run(_ arguments: [String], streams: Streams) throws(CommandError) {
    guard let parsed = try Arguments.command(arguments, spec: spec, streams: streams) else {
      return
    }
    let names = parsed.positionals
    guard let name = names.first else {
      streams.print(ResumeDataTool.help)
      return
    }
    let command = try ResumeDataTool.knownCommand(name)
    switch names.count {
    case 1:
      streams.print(command.help)
    case 2 where !command.actions.isEmpty:
      guard let action = command.actions.first(where: { $0.name == names[1] }) else {
        throw .usage(
          "\(name) has no action '\(names[1])'"
            + Suggestions.hint(for: names[1], in: command.actions.map(\.name)))
      }
      streams.print(action.help)
    default:
      throw .usage("help takes a subcommand\(command.actions.isEmpty ? "" : " and an action")")
    }
  }
}

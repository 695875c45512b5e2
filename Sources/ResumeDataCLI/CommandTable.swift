import ResumeData

/// What an option's value (or a command's positional arguments) is: how a shell completes it.
enum ValueKind: Sendable, Equatable {
  /// A file path; `-` is standard input or output.
  case file
  /// A directory path.
  case directory
  /// An http or https URL.
  case url
  /// Free text (a header field, a hex digest, a group name, a task ID).
  case text
  /// A whole or decimal number.
  case number
  /// One of a fixed list of names.
  case choice([String])
  /// A subcommand's name (for `help`); a case of its own because the table that lists them
  /// cannot be read while it is being built.
  case subcommand

  /// The names `--target` accepts.
  static var targets: ValueKind { .choice(RepairTarget.names) }

  /// Every resume-data generation, as `--to` accepts them.
  static var generations: ValueKind {
    .choice(ResumeDataGeneration.allCases.map(\.rawValue))
  }
}

/// One option of a command: its spellings, and the kind of value it takes (none for a flag).
struct OptionSpec: Sendable, Equatable {
  /// Every spelling, short first (`-o`, `--output`).
  let names: [String]
  /// The kind of value it takes; nil for a flag.
  let value: ValueKind?
  /// Whether it may be given more than once with each value kept (`--header`).
  let repeatable: Bool

  /// A flag, which takes no value.
  static func flag(_ names: String...) -> OptionSpec {
    OptionSpec(names: names, value: nil, repeatable: false)
  }

  /// An option that takes a value.
  static func option(_ names: String..., value: ValueKind, repeatable: Bool = false) -> OptionSpec {
    OptionSpec(names: names, value: value, repeatable: repeatable)
  }

  /// `-h`/`--help`, which every command accepts.
  static let help = flag("-h", "--help")
}

/// An action of a command that has its own (`downloads list`), with its own help.
struct ActionSpec: Sendable {
  /// The action's name, the command's first positional argument.
  let name: String
  /// What `resumedata COMMAND ACTION --help` prints.
  let help: String
}

/// Everything the tool knows about one subcommand: the one table that dispatch, the parser, help,
/// suggestions and shell completions all read, so that none of them can drift from the others.
struct CommandSpec: Sendable {
  /// The subcommand's name.
  let name: String
  /// One line for the tool's help and for shell completions.
  let summary: String
  /// What `resumedata NAME --help` and `resumedata help NAME` print.
  let help: String
  /// The options it accepts, besides `-h`/`--help`.
  let options: [OptionSpec]
  /// What its positional arguments are (after the action, if it has actions); nil when none.
  let arguments: ValueKind?
  /// Its actions, when its first positional argument names one.
  let actions: [ActionSpec]
  /// Runs it with the arguments after its name; its exit status when it has one of its own.
  let run: @Sendable ([String], Streams) throws(CommandError) -> ExitCode

  /// Creates a subcommand's entry.
  init(
    name: String, summary: String, help: String, options: [OptionSpec], arguments: ValueKind?,
    actions: [ActionSpec] = [],
    run: @escaping @Sendable ([String], Streams) throws(CommandError) -> ExitCode
  ) {
    self.name = name
    self.summary = summary
    self.help = help
    self.options = options
    self.arguments = arguments
    self.actions = actions
    self.run = run
  }

  /// Creates the entry of a subcommand that exits 0 whenever it does not throw.
  init(
    name: String, summary: String, help: String, options: [OptionSpec], arguments: ValueKind?,
    actions: [ActionSpec] = [],
    run: @escaping @Sendable ([String], Streams) throws(CommandError) -> Void
  ) {
    self.init(
      name: name, summary: summary, help: help, options: options, arguments: arguments,
      actions: actions
    ) { (arguments, streams) throws(CommandError) in
      try run(arguments, streams)
      return .success
    }
  }

  /// Every option it accepts, `-h`/`--help` last.
  var allOptions: [OptionSpec] { options + [.help] }

  /// The help of an action when `action` names one, else the command's.
  func help(action: String?) -> String {
    actions.first { $0.name == action }?.help ?? help
  }
}

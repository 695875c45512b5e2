/// `resumedata completions bash|zsh|fish [--json]`: a completion script made from the command
/// table, so that it offers exactly what the parser accepts.
enum CompletionsCommand {
  /// The text `resumedata completions --help` prints.
  static let help = """
    OVERVIEW: Print a shell completion script for resumedata.

    The script completes subcommands, their actions and options, and each option's value
    by its kind: files, directories, target and generation names, formats. It is made
    from the table the parser reads, so it offers exactly what the tool accepts.

    USAGE: resumedata completions bash|zsh|fish
           resumedata completions --json

    ARGUMENTS:
      SHELL             bash, zsh or fish.

    OPTIONS:
      --json            Print the command table itself (every subcommand, its actions,
                        options and value kinds) as one JSON object, for other shells
                        and tools (see docs/cli/completions.md).
      -h, --help        Show this help.

    EXIT STATUS:
      0 printed, 64 usage error.

    EXAMPLES:
      resumedata completions bash > ~/.local/share/bash-completion/completions/resumedata
      resumedata completions zsh > ~/.zfunc/_resumedata
      resumedata completions fish > ~/.config/fish/completions/resumedata.fish

    """

  /// The shells a script can be made for.
  static let shells = ["bash", "zsh", "fish"]

  /// The entry of `completions` in the command table.
  static let spec = CommandSpec(
    name: "completions", summary: "Print a shell completion script (bash, zsh or fish).",
    help: help, options: [.flag("--json")], arguments: .choice(shells), run: run(_:streams:))

  /// Runs `resumedata completions` with the arguments after its name.
  static func run(_ arguments: [String], streams: Streams) throws(CommandError) {
    guard let parsed = try Arguments.command(arguments, spec: spec, streams: streams) else {
      return
    }
    let commands = ResumeDataTool.commands
    if parsed.has("--json") {
      guard parsed.positionals.isEmpty else { throw .usage("--json takes no shell") }
      streams.print(json(commands))
      return
    }
    guard parsed.positionals.count == 1, let shell = parsed.positionals.first else {
      throw .usage("completions needs one shell: bash, zsh or fish")
    }
    switch shell {
    case "bash": streams.print(bash(commands))
    case "zsh": streams.print(zsh(commands))
    case "fish": streams.print(fish(commands))
    default:
      throw .usage(
        "unknown shell '\(shell)' (bash, zsh, fish)" + Suggestions.hint(for: shell, in: shells))
    }
  }

  // MARK: bash

  /// A bash script: `complete -F _resumedata resumedata`.
  static func bash(_ commands: [CommandSpec]) -> String {
    let topLevel = commands.map(\.name) + ResumeDataTool.options.flatMap(\.names)
    var script = """
      # bash completion for resumedata; made by `resumedata completions bash`.
      _resumedata() {
        local cur prev
        cur="${COMP_WORDS[COMP_CWORD]}"
        prev="${COMP_WORDS[COMP_CWORD-1]}"
        COMPREPLY=()
        if [[ $COMP_CWORD -eq 1 ]]; then
          COMPREPLY=($(compgen -W "\(topLevel.joined(separator: " "))" -- "$cur"))
          return 0
        fi
        case "${COMP_WORDS[1]}" in

      """
    for command in commands {
      script += "    \(command.name))\n"
      let valued = command.allOptions.filter { $0.value != nil }
      if !valued.isEmpty {
        script += "      case \"$prev\" in\n"
        for option in valued {
          let reply = option.value.map { bashReply($0, commands) } ?? ""
          script += "        \(option.names.joined(separator: "|"))) \(reply); return 0 ;;\n"
        }
        script += "      esac\n"
      }
      let optionNames = command.allOptions.flatMap(\.names).joined(separator: " ")
      script += "      if [[ \"$cur\" == -* ]]; then\n"
      script += "        COMPREPLY=($(compgen -W \"\(optionNames)\" -- \"$cur\"))\n"
      if !command.actions.isEmpty {
        let actions = command.actions.map(\.name).joined(separator: " ")
        script += "      elif [[ $COMP_CWORD -eq 2 ]]; then\n"
        script += "        COMPREPLY=($(compgen -W \"\(actions)\" -- \"$cur\"))\n"
      }
      if let arguments = command.arguments {
        script += "      else\n        \(bashReply(arguments, commands))\n"
      }
      script += "      fi\n      ;;\n"
    }
    script += """
        esac
        return 0
      }
      complete -o filenames -F _resumedata resumedata

      """
    return script
  }

  /// The bash statement that completes a value of `kind`.
  private static func bashReply(_ kind: ValueKind, _ commands: [CommandSpec]) -> String {
    switch kind {
    case .file: "COMPREPLY=($(compgen -f -- \"$cur\"))"
    case .directory: "COMPREPLY=($(compgen -d -- \"$cur\"))"
    case .url, .text, .number: "COMPREPLY=()"
    case .choice(let names):
      "COMPREPLY=($(compgen -W \"\(names.joined(separator: " "))\" -- \"$cur\"))"
    case .subcommand:
      "COMPREPLY=($(compgen -W \"\(commands.map(\.name).joined(separator: " "))\" -- \"$cur\"))"
    }
  }

  // MARK: zsh

  /// A zsh script for `fpath` (`#compdef resumedata`), built on `_arguments`.
  static func zsh(_ commands: [CommandSpec]) -> String {
    let described = commands.map { "    " + zshQuoted("\($0.name):\($0.summary)") }
    var script = """
      #compdef resumedata
      # zsh completion for resumedata; made by `resumedata completions zsh`.

      _resumedata() {
        local -a subcommands
        subcommands=(
      \(described.joined(separator: "\n"))
        )
        if (( CURRENT == 2 )); then
          _describe -t subcommands 'resumedata subcommand' subcommands
          compadd -- \(ResumeDataTool.options.flatMap(\.names).joined(separator: " "))
          return
        fi
        local command=$words[2]
        shift words
        (( CURRENT-- ))
        curcontext="${curcontext%:*:*}:resumedata-$command:"
        case $command in

      """
    for command in commands {
      var specs = [String]()
      for option in command.allOptions {
        for name in option.names {
          // A long option also takes its value after `=`, as the parser accepts it.
          let spelled = option.value == nil ? name : name.hasPrefix("--") ? name + "=" : name
          let value = option.value.map { ":\(zshMessage($0)):\(zshAction($0, commands))" } ?? ""
          specs.append(zshQuoted((option.repeatable ? "*" : "") + spelled + value))
        }
      }
      if !command.actions.isEmpty {
        let actions = command.actions.map(\.name).joined(separator: " ")
        specs.append(zshQuoted("1:action:(\(actions))"))
      }
      if let arguments = command.arguments {
        specs.append(zshQuoted("*:\(zshMessage(arguments)):\(zshAction(arguments, commands))"))
      }
      script += "    (\(command.name))\n      _arguments -S \\\n"
      script += specs.map { "        " + $0 }.joined(separator: " \\\n") + "\n      ;;\n"
    }
    script += """
        esac
      }

      _resumedata "$@"

      """
    return script
  }

  private static func zshMessage(_ kind: ValueKind) -> String {
    switch kind {
    case .file: "file"
    case .directory: "directory"
    case .url: "URL"
    case .text: "value"
    case .number: "number"
    case .choice: "name"
    case .subcommand: "subcommand"
    }
  }

  private static func zshAction(_ kind: ValueKind, _ commands: [CommandSpec]) -> String {
    switch kind {
    case .file: "_files"
    case .directory: "_files -/"
    case .url: "_urls"
    // A space: show the message, offer nothing.
    case .text, .number: " "
    case .choice(let names): "(\(names.joined(separator: " ")))"
    case .subcommand: "(\(commands.map(\.name).joined(separator: " ")))"
    }
  }

  /// A word in single quotes for zsh (and bash): a quote inside becomes `'\''`.
  private static func zshQuoted(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
  }

  // MARK: fish

  /// A fish script for `~/.config/fish/completions/resumedata.fish`.
  static func fish(_ commands: [CommandSpec]) -> String {
    var lines = [
      "# fish completion for resumedata; made by `resumedata completions fish`.",
      "function __resumedata_needs_subcommand",
      "    test (count (commandline -opc)) -eq 1",
      "end",
      "function __resumedata_using",
      "    set -l tokens (commandline -opc)",
      "    test (count $tokens) -ge 2; and test \"$tokens[2]\" = \"$argv[1]\"",
      "end",
      "function __resumedata_needs_action",
      "    set -l tokens (commandline -opc)",
      "    test (count $tokens) -eq 2; and test \"$tokens[2]\" = \"$argv[1]\"",
      "end",
      "complete -c resumedata -f",
    ]
    for option in ResumeDataTool.options {
      lines.append(
        "complete -c resumedata -n __resumedata_needs_subcommand " + fishOption(option, commands))
    }
    for command in commands {
      lines.append(
        "complete -c resumedata -n __resumedata_needs_subcommand -a \(command.name) -d "
          + fishQuoted(command.summary))
    }
    for command in commands {
      let using = "complete -c resumedata -n '__resumedata_using \(command.name)' "
      for option in command.allOptions {
        lines.append(using + fishOption(option, commands))
      }
      if !command.actions.isEmpty {
        let actions = command.actions.map(\.name).joined(separator: " ")
        lines.append(
          "complete -c resumedata -n '__resumedata_needs_action \(command.name)' -a "
            + fishQuoted(actions))
      }
      if let arguments = command.arguments,
        let value = fishValue(arguments, commands, positional: true)
      {
        lines.append(using + value)
      }
    }
    return lines.joined(separator: "\n") + "\n"
  }

  /// `-s o -l output` and how its value completes.
  private static func fishOption(_ option: OptionSpec, _ commands: [CommandSpec]) -> String {
    var parts = option.names.map { name in
      name.hasPrefix("--") ? "-l " + name.dropFirst(2) : "-s " + name.dropFirst()
    }
    if let value = option.value {
      parts.append(fishValue(value, commands) ?? "-x")
    }
    return parts.joined(separator: " ")
  }

  /// How fish completes a value of `kind` (`-r -F` for an option's file); nil when nothing is
  /// offered. A positional argument is no option's parameter, so it gets neither `-r` nor `-x`
  /// (which implies `-r`).
  private static func fishValue(
    _ kind: ValueKind, _ commands: [CommandSpec], positional: Bool = false
  ) -> String? {
    let (files, exclusive) = positional ? ("-F", "-f -a ") : ("-r -F", "-x -a ")
    switch kind {
    case .file: return files
    case .directory: return exclusive + "'(__fish_complete_directories (commandline -ct))'"
    case .url, .text, .number: return nil
    case .choice(let names): return exclusive + fishQuoted(names.joined(separator: " "))
    case .subcommand: return exclusive + fishQuoted(commands.map(\.name).joined(separator: " "))
    }
  }

  /// A word in single quotes for fish, where a backslash escapes a quote or a backslash.
  private static func fishQuoted(_ text: String) -> String {
    "'"
      + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(
        of: "'", with: "\\'") + "'"
  }

  // MARK: JSON

  /// The command table as `{"schemaVersion": 1, "commands": [...]}`.
  static func json(_ commands: [CommandSpec]) -> String {
    func kind(_ kind: ValueKind?) -> (String, String) {
      switch kind {
      case nil: ("null", "null")
      case .file?: (JSON.string("file"), "null")
      case .directory?: (JSON.string("directory"), "null")
      case .url?: (JSON.string("url"), "null")
      case .text?: (JSON.string("text"), "null")
      case .number?: (JSON.string("number"), "null")
      case .choice(let names)?: (JSON.string("choice"), strings(names))
      case .subcommand?: (JSON.string("choice"), strings(commands.map(\.name)))
      }
    }
    func strings(_ names: [String]) -> String {
      "[" + names.map(JSON.string).joined(separator: ", ") + "]"
    }
    let entries = commands.map { command in
      var object = JSONObject()
      object.add("name", string: command.name)
      object.add("summary", string: command.summary)
      let (arguments, argumentChoices) = kind(command.arguments)
      object.add("arguments", arguments)
      object.add("argumentChoices", argumentChoices)
      object.add("actions", strings(command.actions.map(\.name)))
      let options = command.allOptions.map { option in
        let (value, choices) = kind(option.value)
        return "{\"names\": \(strings(option.names)), \"value\": \(value), "
          + "\"choices\": \(choices), \"repeatable\": \(option.repeatable)}"
      }
      object.add("options", JSON.array(options, level: 3))
      return object.rendered(level: 2)
    }
    var object = JSONObject.document()
    object.add("options", strings(ResumeDataTool.options.flatMap(\.names)))
    object.add("commands", JSON.array(entries, level: 1))
    return object.rendered() + "\n"
  }
}

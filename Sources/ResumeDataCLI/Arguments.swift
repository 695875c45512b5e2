import Foundation

/// A small command-line parser: positional arguments, `--flag`, `--option VALUE`, `--option=VALUE`,
/// `-o VALUE`, and `--` to end options. A lone `-` is a positional argument (standard input/output).
/// An option may be given more than once: `value(_:)` is the last, `values(_:)` all of them.
struct Arguments {
  private(set) var positionals: [String] = []
  // Every option given, in command-line order: repeated options keep each value and their order.
  private var options: [(name: String, value: String)] = []
  private var flags: Set<String> = []

  /// Parses `arguments` given the names of options that take a value and of flags.
  init(_ arguments: [String], options optionNames: Set<String>, flags flagNames: Set<String>)
    throws(CommandError)
  {
    var index = 0
    var onlyPositionals = false
    while index < arguments.count {
      let argument = arguments[index]
      index += 1
      if onlyPositionals || argument == "-" || !argument.hasPrefix("-") {
        positionals.append(argument)
        continue
      }
      if argument == "--" {
        onlyPositionals = true
        continue
      }
      var name = argument
      var inlineValue: String?
      if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
        name = String(argument[..<equals])
        inlineValue = String(argument[argument.index(after: equals)...])
      }
      if flagNames.contains(name) {
        guard inlineValue == nil else { throw .usage("\(name) takes no value") }
        flags.insert(name)
      } else if optionNames.contains(name) {
        if let inlineValue {
          options.append((name, inlineValue))
        } else {
          guard index < arguments.count else { throw .usage("\(name) needs a value") }
          options.append((name, arguments[index]))
          index += 1
        }
      } else {
        let known = (optionNames.union(flagNames)).sorted()
        throw .usage("unknown option '\(name)'" + Suggestions.hint(for: name, in: known))
      }
    }
  }

  /// Parses a command's arguments as its entry in the command table says (`-h`/`--help` always
  /// among the flags); prints its help (its action's, for `downloads list --help`) and returns nil
  /// when asked for it.
  static func command(_ arguments: [String], spec: CommandSpec, streams: Streams)
    throws(CommandError) -> Arguments?
  {
    let options = spec.allOptions
    let parsed = try Arguments(
      arguments,
      options: Set(options.filter { $0.value != nil }.flatMap(\.names)),
      flags: Set(options.filter { $0.value == nil }.flatMap(\.names)))
    if parsed.wantsHelp {
      streams.print(spec.help(action: parsed.positionals.first))
      return nil
    }
    // An empty path names no file: taken as the current directory, it would lead a command to
    // write beside it (`download -o ''` wrote FILE.resumedata into the parent directory).
    for option in options where option.value == .file || option.value == .directory {
      if let given = parsed.occurrences(of: Set(option.names)).first(where: { $0.value.isEmpty }) {
        throw .usage("\(given.name) needs a path, not an empty string")
      }
    }
    if spec.arguments == .file, parsed.positionals.contains("") {
      throw .usage("an empty string is not a FILE")
    }
    return parsed
  }

  /// The one FILE (or `-`) argument of `command` and the bytes read from it.
  func readSingleFile(for command: String, streams: Streams) throws(CommandError) -> (
    path: String, input: Data
  ) {
    let path = try singleFile(for: command)
    return (path, try Files.read(path, streams: streams))
  }

  /// Whether `-h` or `--help` was given.
  var wantsHelp: Bool { flags.contains("-h") || flags.contains("--help") }

  /// The one FILE (or `-`) argument of `command`.
  func singleFile(for command: String) throws(CommandError) -> String {
    guard positionals.count == 1 else {
      throw .usage(
        positionals.isEmpty
          ? "\(command) needs a FILE (or - for standard input)" : "\(command) takes one FILE")
    }
    return positionals[0]
  }

  /// Whether a flag was given.
  func has(_ flag: String) -> Bool { flags.contains(flag) }

  /// An option's value, if given; the last one when it was given more than once.
  func value(_ option: String) -> String? { values(option).last }

  /// Every value of an option, in command-line order.
  func values(_ option: String) -> [String] {
    options.filter { $0.name == option }.map(\.value)
  }

  /// The `-o`/`--output` value, the last of either when given more than once.
  var output: String? { occurrences(of: ["-o", "--output"]).last?.value }

  /// Every value of any of `names`, with the name it was given under, in command-line order: for
  /// options whose relative order matters (edits applied one after another) or that are aliases.
  func occurrences(of names: Set<String>) -> [(name: String, value: String)] {
    options.filter { names.contains($0.name) }
  }
}

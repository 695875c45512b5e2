import Foundation
import TestSupport
import Testing

@testable import ResumeDataCLI

/// The name of every subcommand in the command table.
private let commandNames = ResumeDataTool.commands.map(\.name)

/// The entry of a subcommand in the command table.
private func spec(_ name: String) -> CommandSpec { ResumeDataTool.command(named: name)! }

/// Every help text: each subcommand's and each action's, with a label and whether it takes
/// positional arguments.
private let helpTexts: [(label: String, text: String, hasArguments: Bool)] =
  ResumeDataTool.commands.flatMap { command in
    [(command.name, command.help, command.arguments != nil)]
      + command.actions.map { action in
        ("\(command.name) \(action.name)", action.help, !["list", "run"].contains(action.name))
      }
  }

@Suite("resumedata help")
struct HelpTests {
  @Test("'help NAME' prints exactly what 'NAME --help' prints", arguments: commandNames)
  func helpCommand(name: String) {
    let viaHelp = run(["help", name])
    let viaFlag = run([name, "--help"])
    #expect(viaHelp.0 == .success)
    #expect(viaFlag.0 == .success)
    #expect(viaHelp.1.standardError == "")
    #expect(viaHelp.1.standardOutput == Data(spec(name).help.utf8))
    #expect(viaFlag.1.standardOutput == viaHelp.1.standardOutput)
  }

  @Test(
    "'help downloads ACTION' prints exactly what 'downloads ACTION --help' prints",
    arguments: DownloadsCommand.actions.map(\.name))
  func actionHelp(action: String) {
    let viaHelp = run(["help", "downloads", action])
    let viaFlag = run(["downloads", action, "-h"])
    #expect(viaHelp.0 == .success)
    #expect(viaFlag.0 == .success)
    #expect(text(viaHelp.1.standardOutput).hasPrefix("OVERVIEW: "))
    #expect(text(viaHelp.1.standardOutput).contains("\nUSAGE: resumedata downloads \(action)"))
    #expect(viaFlag.1.standardOutput == viaHelp.1.standardOutput)
  }

  @Test("'help' alone prints the tool's help, which lists every subcommand")
  func toolHelp() {
    let (status, captured) = run(["help"])
    #expect(status == .success)
    #expect(captured.standardOutput == run(["--help"]).1.standardOutput)
    let help = text(captured.standardOutput)
    for command in ResumeDataTool.commands {
      let padded = command.name.padding(toLength: 18, withPad: " ", startingAt: 0)
      #expect(help.contains("\n  \(padded)\(command.summary)\n"), "\(command.name)")
    }
  }

  @Test(
    "Every help has OVERVIEW, USAGE, ARGUMENTS (when it takes any), OPTIONS and EXAMPLES, in order",
    arguments: helpTexts.map(\.label))
  func sections(label: String) throws {
    let help = try #require(helpTexts.first { $0.label == label })
    var headings = ["OVERVIEW: ", "\n\nUSAGE: resumedata "]
    if help.hasArguments { headings.append("\n\nARGUMENTS:\n") }
    headings += ["\n\nOPTIONS:\n", "\n\nEXAMPLES:\n  resumedata "]
    var rest = help.text[...]
    for heading in headings {
      let found = try #require(rest.range(of: heading), "\(label): \(heading)")
      rest = rest[found.upperBound...]
    }
    #expect(help.text.hasPrefix("OVERVIEW: "))
    #expect(help.text.hasSuffix("\n"))
    #expect(!help.text.hasSuffix("\n\n"))
    #expect(help.text.contains("ARGUMENTS:") == help.hasArguments)
  }

  @Test("Every Fixtures/ path an example names exists")
  func examplesUseRealFixtures() throws {
    let pattern = try Regex(#"Fixtures/[A-Za-z0-9._/+-]+"#)
    var paths = Set<String>()
    for help in helpTexts.map(\.text) + [ResumeDataTool.help] {
      for match in help.matches(of: pattern) { paths.insert(String(help[match.range])) }
    }
    #expect(paths.count >= 10)
    for path in paths.sorted() {
      #expect(
        FileManager.default.fileExists(atPath: repositoryRoot.appendingPathComponent(path).path),
        "\(path)")
    }
  }

  @Test(
    "The OPTIONS of each help list every option the parser accepts, and only those",
    arguments: commandNames)
  func optionsMatchTheTable(name: String) throws {
    let help = spec(name).help
    let start = try #require(help.range(of: "\n\nOPTIONS:\n"))
    let end = try #require(help[start.upperBound...].range(of: "\n\n"))
    let section = help[start.upperBound..<end.lowerBound]
    // Words that start with one or two dashes and a letter: option names, not `-` or ranges.
    let words = section.split { !($0.isLetter || $0.isNumber || $0 == "-") }
    let listed = Set(
      words.filter { word in
        let bare = word.drop { $0 == "-" }
        return word.count - bare.count <= 2 && bare.count < word.count
          && bare.first?.isLetter == true
      }.map(String.init))
    let accepted = Set(spec(name).allOptions.flatMap(\.names))
    #expect(listed == accepted)
  }
}

@Suite("resumedata suggestions")
struct SuggestionTests {
  @Test(
    "A mistyped subcommand, option, action or shell is a usage error that suggests the closest",
    arguments: [
      (["inspetc"], "unknown subcommand 'inspetc'; did you mean 'inspect'?", "resumedata"),
      (["insp"], "unknown subcommand 'insp'; did you mean 'inspect'?", "resumedata"),
      (["repare"], "unknown subcommand 'repare'; did you mean 'repair'?", "resumedata"),
      (["frobnicate"], "unknown subcommand 'frobnicate'", "resumedata"),
      (["--verison"], "unknown option '--verison'; did you mean '--version'?", "resumedata"),
      (
        ["inspect", "--jsn"], "unknown option '--jsn'; did you mean '--json'?", "resumedata inspect"
      ),
      (["inspect", "-x"], "unknown option '-x'", "resumedata inspect"),
      (
        ["validate", "--taget=ios12"], "unknown option '--taget'; did you mean '--target'?",
        "resumedata validate"
      ),
      (
        ["convert", "--fromat", "xml"], "unknown option '--fromat'; did you mean '--format'?",
        "resumedata convert"
      ),
      (
        ["edit", "--remove-haeder", "X"],
        "unknown option '--remove-haeder'; did you mean '--remove-header'?", "resumedata edit"
      ),
      (
        ["help", "inspetc"], "unknown subcommand 'inspetc'; did you mean 'inspect'?",
        "resumedata help"
      ),
      (["help", "zzz"], "unknown subcommand 'zzz'", "resumedata help"),
      (
        ["help", "downloads", "ad"], "downloads has no action 'ad'; did you mean 'add'?",
        "resumedata help"
      ),
      (
        ["downloads", "lsit"],
        "unknown action 'lsit' (list, add, run, pause, resume, cancel); did you mean 'list'?",
        "resumedata downloads"
      ),
      (
        ["completions", "bsh"],
        "unknown shell 'bsh' (bash, zsh, fish); did you mean 'bash' or 'zsh'?",
        "resumedata completions"
      ),
    ])
  func suggestion(arguments: [String], message: String, helpCommand: String) {
    let (status, captured) = run(arguments)
    #expect(status == .usage)
    #expect(captured.standardOutput.isEmpty)
    #expect(
      captured.standardError == "Error: \(message)\nRun '\(helpCommand) --help' for usage.\n")
  }

  @Test(
    "Edit distance counts insertions, deletions, substitutions and neighbour swaps",
    arguments: [
      ("inspetc", "inspect", 1), ("json", "jsno", 1), ("abc", "abc", 0), ("", "abc", 3),
      ("abc", "", 3), ("kitten", "sitting", 3), ("ca", "abc", 3), ("repare", "repair", 2),
    ])
  func editDistance(a: String, b: String, distance: Int) {
    #expect(Suggestions.editDistance(a, b) == distance)
    #expect(Suggestions.editDistance(b, a) == distance)
  }
}

/// How a shell's script spells an option name: bash lists it, zsh quotes it as an `_arguments`
/// spec, fish names it with `-l` or `-s`.
private func spelled(_ name: String, in shell: String) -> [String] {
  switch shell {
  case "bash": [" \(name) ", " \(name)\"", "\"\(name) ", "\(name)|", "\(name))"]
  case "zsh": ["'\(name)'", "'\(name)=:", "'\(name):", "'*\(name)=:"]
  default: name.hasPrefix("--") ? ["-l \(name.dropFirst(2))"] : ["-s \(name.dropFirst())"]
  }
}

@Suite("resumedata completions")
struct CompletionTests {
  @Test(
    "Every subcommand, action and option the parser accepts is in each shell's script",
    arguments: CompletionsCommand.shells)
  func everyOption(shell: String) {
    let (status, captured) = run(["completions", shell])
    #expect(status == .success)
    #expect(captured.standardError == "")
    let script = text(captured.standardOutput)
    let words = Set(script.split { !($0.isLetter || $0.isNumber || "-+.".contains($0)) })
    for command in ResumeDataTool.commands {
      #expect(words.contains(Substring(command.name)), "\(shell): \(command.name)")
      for action in command.actions {
        #expect(
          words.contains(Substring(action.name)), "\(shell): \(command.name) \(action.name)")
      }
      for name in command.allOptions.flatMap(\.names) {
        #expect(
          spelled(name, in: shell).contains { script.contains($0) },
          "\(shell): \(command.name) \(name)")
      }
    }
  }

  @Test("Each option in the table is accepted by its subcommand's parser", arguments: commandNames)
  func parserAcceptsTheTable(name: String) {
    for option in spec(name).options {
      for spelling in option.names {
        // Without the positional arguments each command needs, every run stops at a usage error
        // (or prints); none gets as far as reading input or the network.
        let arguments = [name, spelling] + (option.value == nil ? [] : ["x"])
        let (_, captured) = run(arguments)
        #expect(!captured.standardError.contains("unknown option"), "\(arguments)")
      }
    }
    let (status, captured) = run([name, "--not-an-option"])
    #expect(status == .usage)
    #expect(captured.standardError.hasPrefix("Error: unknown option '--not-an-option'"))
  }

  @Test("The bash script parses, and completes subcommands, actions, options and value kinds")
  func bash() throws {
    let bash = URL(fileURLWithPath: "/bin/bash")
    try #require(
      FileManager.default.isExecutableFile(atPath: bash.path), "bash is not installed")
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let script = try scratch.write(run(["completions", "bash"]).1.standardOutput, to: "rd.bash")
    #expect(try shell(bash, ["-n", script]) == "")
    func complete(_ words: [String]) throws -> String {
      let quoted = words.map { "'\($0)'" }.joined(separator: " ")
      return try shell(
        bash,
        [
          "-c",
          "source '\(script)'; COMP_WORDS=(resumedata \(quoted)); "
            + "COMP_CWORD=\(words.count); _resumedata; echo \"${COMPREPLY[*]}\"",
        ])
    }
    #expect(try complete(["rep"]) == "repair\n")
    #expect(try complete(["--ver"]) == "--version\n")
    #expect(try complete(["downloads", "p"]) == "pause\n")
    #expect(try complete(["repair", "--target", "ios1"]) == RepairTargetNames.ios1 + "\n")
    #expect(
      try complete(["convert", "--to", "network"]) == "network-framework network-framework-webkit\n"
    )
    #expect(try complete(["inspect", "--te"]) == "--temp-dir\n")
    #expect(try complete(["validate", "--st"]) == "--strict\n")
    #expect(try complete(["help", "down"]) == "download downloads\n")
    #expect(try complete(["completions", "f"]) == "fish\n")
    #expect(try complete(["download", "--header", ""]) == "\n")
  }

  @Test(
    "The zsh and fish scripts (no shell here to run them) spell known entries exactly",
    arguments: [
      ("zsh", "#compdef resumedata\n"),
      ("zsh", "    (repair)\n      _arguments -S \\\n        '--target=:name:(ios10.0-10.1 "),
      ("zsh", "        '-o:file:_files' \\\n        '--output=:file:_files' \\\n"),
      ("zsh", "        '*--header=:value: ' \\\n"),
      ("zsh", "        '1:action:(list add run pause resume cancel)' \\\n"),
      ("zsh", "    'archive:Print a keyed archive'\\''s object graph, as text or JSON.'\n"),
      ("fish", "complete -c resumedata -n '__resumedata_using inspect' -F\n"),
      ("fish", "complete -c resumedata -n '__resumedata_using validate' -l strict\n"),
      ("zsh", "        '--temp-dir=:directory:_files -/' \\\n        '--strict' \\\n"),
      ("fish", "complete -c resumedata -n '__resumedata_using repair' -s o -l output -r -F\n"),
      (
        "fish",
        "complete -c resumedata -n '__resumedata_using convert' -l format -x -a 'xml binary'\n"
      ),
      (
        "fish",
        "complete -c resumedata -n '__resumedata_needs_action downloads' -a 'list add run pause resume cancel'\n"
      ),
      (
        "fish", "complete -c resumedata -n '__resumedata_using completions' -f -a 'bash zsh fish'\n"
      ),
      ("fish", "-a archive -d 'Print a keyed archive\\'s object graph, as text or JSON.'\n"),
    ])
  func scriptEntries(shell: String, entry: String) {
    #expect(text(run(["completions", shell]).1.standardOutput).contains(entry))
  }

  @Test("'completions --json' prints the command table")
  func json() throws {
    let (status, captured) = run(["completions", "--json"])
    #expect(status == .success)
    let object = try #require(
      try JSONSerialization.jsonObject(with: captured.standardOutput) as? [String: Any])
    #expect(object["schemaVersion"] as? Int == 1)
    #expect(object["options"] as? [String] == ["-h", "--help", "--version"])
    let commands = try #require(object["commands"] as? [[String: Any]])
    #expect(commands.compactMap { $0["name"] as? String } == commandNames)
    let repair = try #require(commands.first { $0["name"] as? String == "repair" })
    let options = try #require(repair["options"] as? [[String: Any]])
    let target = try #require(options.first { $0["names"] as? [String] == ["--target"] })
    #expect(target["value"] as? String == "choice")
    #expect(target["choices"] as? [String] == RepairTargetNames.all)
    #expect(repair["arguments"] as? String == "file")
    let downloads = try #require(commands.first { $0["name"] as? String == "downloads" })
    #expect(
      downloads["actions"] as? [String] == ["list", "add", "run", "pause", "resume", "cancel"])
  }
}

/// The repair targets, spelled out so that a change to them shows up here.
private enum RepairTargetNames {
  static let all = [
    "ios10.0-10.1", "ios10.2-10.3", "ios11.0-11.2", "ios11.3+", "ios12", "ios13+",
    "network-framework", "linux", "macos10.12-10.12.1", "macos10.12.2-10.12.6",
    "macos10.13-10.13.3", "macos10.13.4+", "macos10.14", "macos10.15+",
  ]
  static let ios1 = "ios10.0-10.1 ios10.2-10.3 ios11.0-11.2 ios11.3+ ios12 ios13+"
}

/// Runs a program and returns its standard output; its standard error must be empty.
private func shell(_ program: URL, _ arguments: [String]) throws -> String {
  let process = Process()
  process.executableURL = program
  process.arguments = arguments
  let output = Pipe()
  let error = Pipe()
  process.standardOutput = output
  process.standardError = error
  try process.run()
  let data = output.fileHandleForReading.readDataToEndOfFile()
  let errorText = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
  process.waitUntilExit()
  #expect(errorText == "")
  #expect(process.terminationStatus == 0)
  return String(decoding: data, as: UTF8.self)
}

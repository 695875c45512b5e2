import Foundation
import TestSupport
import Testing

@testable import ResumeDataCLI

/// One example of a page under docs/cli: a `$ resumedata …` line of a ```console block and the
/// lines shown under it (standard output, then standard error).
struct DocumentedExample: Sendable, CustomStringConvertible {
  /// The page's file name.
  let page: String
  /// The command line after `$ `.
  let command: String
  /// The output shown, each line ended by a newline.
  let output: String

  var description: String { "\(page): \(command)" }
}

/// The pages under docs/cli, by file name.
private let pages = filesInRepository("docs/cli").filter { $0.hasSuffix(".md") }

/// A page's text.
private func page(_ name: String) throws -> String {
  try String(
    contentsOf: repositoryRoot.appendingPathComponent("docs/cli").appendingPathComponent(name),
    encoding: .utf8)
}

/// Every example of every page, in order, then the README's: every command the README shows
/// is run, as the pages' are.
let documentedExamples: [DocumentedExample] =
  pages.flatMap { name in
    examples(in: (try? page(name)) ?? "", page: name)
  }
  + examples(
    in: (try? String(
      contentsOf: repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)) ?? "",
    page: "README.md")

/// The examples of one page: in each ```console block (indented as its fence is), a line that
/// starts `$ resumedata ` and the lines up to the next such line or the fence.
func examples(in text: String, page: String) -> [DocumentedExample] {
  var found = [DocumentedExample]()
  var indent: String?
  var command: String?
  var output = ""
  func finish() {
    if let command { found.append(DocumentedExample(page: page, command: command, output: output)) }
    command = nil
    output = ""
  }
  for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
    guard let prefix = indent else {
      if line.trimmingCharacters(in: .whitespaces) == "```console" {
        indent = String(line.prefix { $0 == " " })
      }
      continue
    }
    let content = line.hasPrefix(prefix) ? String(line.dropFirst(prefix.count)) : line
    if content == "```" {
      finish()
      indent = nil
    } else if content.hasPrefix("$ resumedata ") {
      finish()
      command = String(content.dropFirst(2))
    } else if command != nil {
      output += content + "\n"
    }
  }
  return found
}

/// Runs the tool in-process on a thread of its own. `downloads` waits for its async work with a
/// semaphore, as a command-line tool may; on one of the few threads of the cooperative pool, as a
/// test runs, several such waits at once would leave no thread for the work they wait for.
func runOnOwnThread(_ arguments: [String]) async -> (ExitCode, Captured) {
  await withCheckedContinuation { continuation in
    Thread { continuation.resume(returning: run(arguments)) }.start()
  }
}

/// Splits a command line as a POSIX shell would for the quoting the pages use: single and
/// double quotes, and a backslash outside them.
func shellWords(_ line: String) -> [String] {
  var words = [String]()
  var word: String?
  var quote: Character?
  var escaped = false
  for character in line {
    if escaped {
      word = (word ?? "") + String(character)
      escaped = false
    } else if let open = quote {
      if character == open { quote = nil } else { word = (word ?? "") + String(character) }
    } else if character == "'" || character == "\"" {
      quote = character
      word = word ?? ""
    } else if character == "\\" {
      escaped = true
    } else if character == " " {
      if let finished = word { words.append(finished) }
      word = nil
    } else {
      word = (word ?? "") + String(character)
    }
  }
  if let word { words.append(word) }
  return words
}

@Suite("docs/cli")
struct DocumentationTests {
  @Test(
    "Each example on the pages prints exactly the output shown", arguments: documentedExamples)
  func example(_ example: DocumentedExample) async throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    // Fixtures are read from the repository; what the example writes goes to a scratch
    // directory; both print as the relative paths the page shows.
    let writes: Set<String> = ["-o", "--output", "--state-dir", "--resume-data"]
    // An example that names the server gets one of its own.
    let server = example.command.contains(DocServer.placeholder) ? try DocServer.start() : nil
    defer { server?.stop() }
    let address = server.map { "127.0.0.1:\($0.port)" } ?? DocServer.placeholder
    let words = shellWords(example.command).map {
      $0.replacingOccurrences(of: DocServer.placeholder, with: address)
    }
    #expect(words.first == "resumedata")
    var arguments = [String]()
    for (index, word) in words.enumerated().dropFirst() {
      if word.hasPrefix("Fixtures/") {
        arguments.append(repositoryRoot.appendingPathComponent(word).path)
      } else if writes.contains(words[index - 1]), word != "-" {
        arguments.append(scratch.path(word))
      } else {
        arguments.append(word)
      }
    }
    let (_, captured) = await runOnOwnThread(arguments)
    let output = (text(captured.standardOutput) + captured.standardError)
      .replacingOccurrences(of: repositoryRoot.path + "/", with: "")
      .replacingOccurrences(of: scratch.url.path + "/", with: "")
      .replacingOccurrences(of: address, with: DocServer.placeholder)
    #expect(output == example.output)
  }

  @Test("There is a page for every subcommand, listed in the index, with an example of it")
  func everySubcommand() throws {
    let index = try page("README.md")
    for command in ResumeDataTool.commands {
      #expect(pages.contains("\(command.name).md"), "\(command.name)")
      #expect(index.contains("[\(command.name).md](\(command.name).md)"), "\(command.name)")
      #expect(
        documentedExamples.contains {
          $0.page == "\(command.name).md" && $0.command.hasPrefix("resumedata \(command.name) ")
        }, "\(command.name)")
    }
    #expect(pages.count == ResumeDataTool.commands.count + 1)
    #expect(documentedExamples.count >= 30)
  }

  @Test("Each page names every option its subcommand accepts")
  func everyOption() throws {
    for command in ResumeDataTool.commands {
      let text = try page("\(command.name).md")
      for name in command.allOptions.flatMap(\.names) {
        #expect(text.contains("`\(name)"), "\(command.name): \(name)")
      }
      #expect(text.contains("## Exit status"), "\(command.name)")
      #expect(text.contains("## JSON output"), "\(command.name)")
    }
  }

  @Test("README.md links the command-line pages")
  func linkedFromReadme() throws {
    let readme = try String(
      contentsOf: repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
    #expect(readme.contains("](docs/cli/README.md)"))
  }

  @Test(
    "Command lines split as a shell splits them",
    arguments: [
      ("resumedata a b", ["resumedata", "a", "b"]),
      ("resumedata --header 'A: b c' x", ["resumedata", "--header", "A: b c", "x"]),
      ("resumedata \"x y\" z\\ w ''", ["resumedata", "x y", "z w", ""]),
    ])
  func words(line: String, words: [String]) {
    #expect(shellWords(line) == words)
  }
}

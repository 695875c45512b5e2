import Foundation
import TestSupport
import Testing

/// A ```swift block of a DocC article.
struct ArticleBlock: Sendable, CustomStringConvertible {
  /// The article, from the repository's root.
  let article: String
  /// The block's first line in the article, from 1.
  let line: Int
  /// Its lines.
  let lines: [String]

  var description: String { "\(article):\(line)" }
}

/// Every ```swift block of every article of the DocC catalogs (Sources/<Module>/<Module>.docc),
/// and of the README.
let articleBlocks: [ArticleBlock] = {
  let sources = repositoryRoot.appendingPathComponent("Sources")
  let paths = FileManager.default.enumerator(atPath: sources.path)?.compactMap { $0 as? String }
  let readme = try? String(
    contentsOf: repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
  return (paths ?? []).filter { $0.contains(".docc/") && $0.hasSuffix(".md") }.sorted()
    .flatMap { path -> [ArticleBlock] in
      let text = (try? String(contentsOf: sources.appendingPathComponent(path), encoding: .utf8))
      return swiftBlocks(in: text ?? "", article: "Sources/" + path)
    } + swiftBlocks(in: readme ?? "", article: "README.md")
}()

/// The ```swift blocks of an article's text.
func swiftBlocks(in text: String, article: String) -> [ArticleBlock] {
  var blocks = [ArticleBlock]()
  var open: (line: Int, lines: [String])?
  for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
    if let block = open {
      if line.hasPrefix("```") {
        blocks.append(ArticleBlock(article: article, line: block.line, lines: block.lines))
        open = nil
      } else {
        open?.lines.append(String(line))
      }
    } else if line == "```swift" {
      open = (index + 2, [])
    }
  }
  return blocks
}

/// Lines as compared: without their indentation, blank lines and imports left out (the compiled
/// file imports once at its top, and nests each block in a function).
func comparable(_ lines: [String]) -> [String] {
  lines.map { $0.trimmingCharacters(in: .whitespaces) }
    .filter { !$0.isEmpty && !$0.hasPrefix("import ") }
}

@Suite("DocC articles")
struct ArticleSnippetTests {
  /// Blocks that are not Swift a module compiles: a package manifest's fragment.
  static let notCompiled = [".target("]

  @Test("The catalogs' articles hold their Swift blocks (a parser that found none would pass)")
  func blocksFound() {
    #expect(articleBlocks.count >= 10)
    #expect(Set(articleBlocks.map(\.article)).count >= 6)
  }

  @Test(
    "Every Swift block of every article is compiled, line for line, in ArticleSnippets.swift",
    arguments: articleBlocks)
  func compiled(_ block: ArticleBlock) throws {
    let lines = comparable(block.lines)
    try #require(!lines.isEmpty)
    if Self.notCompiled.contains(where: { lines[0].hasPrefix($0) }) { return }
    let compiled = comparable(
      try String(
        contentsOf: repositoryRoot.appendingPathComponent(
          "Tests/ResumeDataCLITests/ArticleSnippets.swift"),
        encoding: .utf8
      ).components(separatedBy: "\n"))
    let found = compiled.indices.contains { start in
      compiled[start...].starts(with: lines)
    }
    #expect(
      found,
      "\(block): not in ArticleSnippets.swift as written: \(lines.joined(separator: " ⏎ "))")
  }
}

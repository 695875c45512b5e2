import Foundation

/// The repository root, found from this file's path (Tests/TestSupport/TestSupport.swift).
public let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
  .deletingLastPathComponent().deletingLastPathComponent()

/// `../shared/peer-suites` beside the repository, where other implementations' test data lives.
public let peerSuites = repositoryRoot.deletingLastPathComponent().appendingPathComponent(
  "shared/peer-suites")

/// Whether the peer suites are present; tests that need them are disabled with this as the reason.
public let peerSuitesPresent = FileManager.default.fileExists(atPath: peerSuites.path)

/// Reads a fixture from `Fixtures/`.
public func fixture(_ name: String) throws -> Data {
  try Data(
    contentsOf: repositoryRoot.appendingPathComponent("Fixtures").appendingPathComponent(name))
}

/// The names of the files in a folder of the repository, sorted; empty when it is absent.
public func filesInRepository(_ folder: String) -> [String] {
  let path = repositoryRoot.appendingPathComponent(folder).path
  return ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
}

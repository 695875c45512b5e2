import Foundation

/// The repository root, found from this file's path.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
  .deletingLastPathComponent()
  .deletingLastPathComponent()

/// `../shared/peer-suites` beside the repository.
let peerSuites = repositoryRoot.deletingLastPathComponent().appendingPathComponent(
  "shared/peer-suites")

/// Whether the peer suites are present; tests that need them are disabled with this as the reason.
let peerSuitesPresent = FileManager.default.fileExists(atPath: peerSuites.path)

/// Reads a fixture from `Fixtures/`.
func fixture(_ name: String) throws -> Data {
  try Data(
    contentsOf: repositoryRoot.appendingPathComponent("Fixtures").appendingPathComponent(name))
}

/// Apple-made keyed archives in the peer suites, relative to the suites' root.
let appleArchives: [String] = {
  let folder = "swift-corelibs-foundation/Tests/Foundation/Resources/"
  let fixtures =
    (try? FileManager.default.contentsOfDirectory(
      atPath: peerSuites.path + "/" + folder + "Fixtures/macOS-10.14")) ?? []
  return fixtures.sorted().map { folder + "Fixtures/macOS-10.14/" + $0 }
    + [
      folder + "NSKeyedUnarchiver-ComplexTest.plist",
      "rust-plist/tests/data/binary_NSKeyedArchiver.plist",
    ]
}()

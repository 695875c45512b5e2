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

/// Every blob and archive fixture (`Fixtures/resume`, `repair` and `archive`, recursively): what
/// the differential tests of the fast paths run over.
public func blobAndArchiveFixtures() -> [String] {
  fixturesRecursively("resume") + fixturesRecursively("repair") + fixturesRecursively("archive")
}

/// Every file under a folder of `Fixtures/`, recursively, as paths relative to `Fixtures/`
/// (`resume/truncated/nw-archive.blob`), sorted; empty when the folder is absent.
public func fixturesRecursively(_ folder: String) -> [String] {
  let root = repositoryRoot.appendingPathComponent("Fixtures").appendingPathComponent(folder)
  let paths = FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String } ?? []
  return paths.filter { path in
    var isDirectory: ObjCBool = false
    let exists = FileManager.default.fileExists(
      atPath: root.appendingPathComponent(path).path, isDirectory: &isDirectory)
    return exists && !isDirectory.boolValue
  }.map { folder + "/" + $0 }.sorted()
}

/// A small, seeded pseudo-random generator (SplitMix64), so generated cases are the same every run.
public struct SeededGenerator: RandomNumberGenerator {
  /// The generator's state: the seed, advanced once a number.
  public var state: UInt64
  /// A generator whose numbers follow from `seed`.
  public init(seed: UInt64) { state = seed }
  /// The next number.
  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

/// Where two byte strings first differ, nil when they are equal: what a test of a file's bytes
/// checks instead of comparing the bytes in `#expect`, which on a mismatch would compute a diff of
/// millions of bytes (for minutes, holding up the whole run).
public func firstDifference(_ actual: Data, _ expected: Data) -> String? {
  // Data's own comparison is a memcmp; the byte loop below runs only to say where they differ.
  if actual == expected { return nil }
  let left = [UInt8](actual)
  let right = [UInt8](expected)
  let common = min(left.count, right.count)
  if let index = (0..<common).first(where: { left[$0] != right[$0] }) {
    return "byte \(index): \(left[index]) instead of \(right[index])"
  }
  return left.count == right.count ? nil : "\(left.count) bytes instead of \(right.count)"
}

/// The test vectors of RFC 4648, section 10: each text and its base64.
public let base64Vectors: [(plain: String, encoded: String)] = [
  ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="),
  ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy"),
]

/// `length` bytes in which every byte value turns up: a multiplicative scramble of the position
/// and the length.
public func scrambledBytes(_ length: Int, shift: Int = 5) -> Data {
  Data((0..<length).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761 &+ length) >> shift) })
}

import Foundation
import KeyedArchive
import PropertyList
import ResumeData

/// A fresh directory for one test's outputs; the test removes it with `remove()`.
struct ScratchDirectory {
  /// The directory.
  let url: URL

  /// Creates a directory under the system's temporary directory.
  init() throws {
    url = FileManager.default.temporaryDirectory.appendingPathComponent(
      "resumedata-cli-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  /// The path of a file in the directory.
  func path(_ name: String) -> String { url.appendingPathComponent(name).path }

  /// Writes a file in the directory and returns its path.
  func write(_ data: Data, to name: String) throws -> String {
    try data.write(to: url.appendingPathComponent(name))
    return path(name)
  }

  /// Removes the directory and everything in it.
  func remove() { try? FileManager.default.removeItem(at: url) }
}

/// Bytes as UTF-8 text.
func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

/// The bytes of a file under Fixtures/resume.
func resumeFixture(_ name: String) throws -> Data {
  try Data(contentsOf: URL(fileURLWithPath: resumeFixturePath(name)))
}

/// The resume blob in a file, decoded.
func decodedResume(at path: String) throws -> ResumeData {
  try ResumeData(decoding: Data(contentsOf: URL(fileURLWithPath: path)))
}

/// The iOS 12.0–12.2 empty blob: a keyed archive holding only `NSURLSessionResumeInfoVersion`,
/// which every repair refuses and every diagnosis reports as `empty-blob`.
func emptyKeyedBlob() throws -> Data {
  try KeyedArchive(
    root: .dictionary(
      [
        ArchivedDictionaryEntry(
          .string(ResumeDataKey.infoVersion), .integer(PropertyListInteger(4)))
      ], mutable: true)
  ).encoded()
}

/// The first 1,000 bytes of `v2.binary.plist`: a binary plist whose trailer is missing.
func truncatedBlob() throws -> Data { try resumeFixture("v2.binary.plist").prefix(1_000) }

/// Every resume fixture with its generation.
let resumeFixtureGenerations: [(file: String, generation: ResumeDataGeneration)] = [
  ("v1.xml.plist", .v1), ("v2.xml.plist", .v2), ("v2.binary.plist", .v2),
  ("v4-byte-range.xml.plist", .v4), ("keyed-v5-unknown-key.archive", .keyed),
  ("safari.archive", .safari), ("network-framework.blob", .networkFramework),
  ("network-framework-webkit.archive", .networkFrameworkWebKit),
]

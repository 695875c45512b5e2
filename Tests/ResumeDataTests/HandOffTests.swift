import Foundation
import ResumeData
import TestSupport
import Testing

/// One hand-off of `resume/segmented.archive` (ranges 0-1048575 and 2097152-3145727 of 4194304,
/// BytesReceived 1048576) with a partial file of `size` bytes.
struct HandOffCase: Sendable, CustomTestStringConvertible {
  let size: Int
  /// Whether the repair may truncate the file (one that holds nothing past the prefix needs no
  /// leave).
  var allowed = true
  /// The file's size afterwards.
  let sizeAfter: Int
  let bytesReceived: Int64
  let messages: [String]
  var testDescription: String {
    "a partial file of \(size) bytes\(allowed ? "" : ", no leave to truncate")"
  }
}

let handOffCases = [
  HandOffCase(
    size: 4_194_304, sizeAfter: 1_048_576, bytesReceived: 1_048_576,
    messages: [
      "the partial file CFNetworkDownload_v4w5x6.tmp truncated from 4194304 to 1048576 bytes, the prefix ios13+ can resume from (1048576 bytes of later segments dropped), and the segment map removed"
    ]),
  // Shorter than the map's end: only what fits of the later segment is dropped.
  HandOffCase(
    size: 2_500_000, sizeAfter: 1_048_576, bytesReceived: 1_048_576,
    messages: [
      "the partial file CFNetworkDownload_v4w5x6.tmp truncated from 2500000 to 1048576 bytes, the prefix ios13+ can resume from (402848 bytes of later segments dropped), and the segment map removed"
    ]),
  // Truncated already: only the blob changes, with or without leave.
  HandOffCase(
    size: 1_048_576, allowed: false, sizeAfter: 1_048_576, bytesReceived: 1_048_576,
    messages: [
      "the segment map removed: the partial file CFNetworkDownload_v4w5x6.tmp holds 1048576 bytes, the prefix ios13+ can resume from"
    ]),
  // Shorter than the prefix: never lengthened; the count follows the file.
  HandOffCase(
    size: 500_000, allowed: false, sizeAfter: 500_000, bytesReceived: 500_000,
    messages: [
      "the segment map removed: the partial file CFNetworkDownload_v4w5x6.tmp holds 500000 bytes, the prefix ios13+ can resume from",
      "BytesReceived set from 1048576 to 500000",
    ]),
]

@Suite("Handing a segmented download to an Apple system")
struct HandOffTests {
  @Test(
    "The partial file is truncated to the prefix, and the blob says what it holds",
    arguments: handOffCases)
  func truncates(_ handOff: HandOffCase) throws {
    let directory = try #require(
      try directory(for: .withPartial("CFNetworkDownload_v4w5x6.tmp", handOff.size)))
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("CFNetworkDownload_v4w5x6.tmp")
    let blob = try ResumeData(decoding: try fixtureData("resume/segmented.archive"))
    let result = try blob.repaired(
      for: .ios13Later, temporaryDirectory: directory, truncatingPartialFile: handOff.allowed)
    #expect(result.findings.map(\.message) == handOff.messages)
    #expect(result.findings.allSatisfy { $0.code == "hand-off-segments" && $0.severity == .info })
    let size = try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int
    #expect(size == handOff.sizeAfter)
    let repaired = try ResumeData(decoding: try #require(result.blob).encoded())
    #expect(repaired.segments == nil)
    #expect(repaired.bytesReceived == handOff.bytesReceived)
    // Nothing left for the target: the file is what BytesReceived says.
    #expect(
      repaired.findings(temporaryDirectory: directory, for: .ios13Later).map(\.code) == [])
  }

  @Test("Without leave to truncate, the file and the blob stay as they were, with a warning")
  func warns() throws {
    let directory = try #require(
      try directory(for: .withPartial("CFNetworkDownload_v4w5x6.tmp", 4_194_304)))
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("CFNetworkDownload_v4w5x6.tmp")
    let bytes = try fixtureData("resume/segmented.archive")
    let result = try ResumeData(decoding: bytes).repaired(
      for: .ios13Later, temporaryDirectory: directory)
    #expect(
      result.findings.map(\.description) == [
        "warning hand-off-segments: left as it is: the partial file is allocated to all 4194304 bytes and holds segments past byte 1048576, the prefix ios13+ can resume from; truncate the file to 1048576 bytes first (`repair --temp-dir DIR --truncate-partial-file` does, dropping the segments past it) (ResumeDataKitSegments)"
      ])
    #expect(try #require(result.blob).encoded(keepingUntouchedBytes: true) == bytes)
    let size = try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int
    #expect(size == 4_194_304)
  }

  @Test("A symbolic link in the partial file's place is not followed")
  func symbolicLink() throws {
    let directory = try #require(try directory(for: .withPartial("elsewhere.bin", 4_194_304)))
    defer { try? FileManager.default.removeItem(at: directory) }
    try FileManager.default.createSymbolicLink(
      atPath: directory.appendingPathComponent("CFNetworkDownload_v4w5x6.tmp").path,
      withDestinationPath: directory.appendingPathComponent("elsewhere.bin").path)
    let result = try ResumeData(decoding: try fixtureData("resume/segmented.archive")).repaired(
      for: .ios13Later, temporaryDirectory: directory, truncatingPartialFile: true)
    #expect(
      result.findings.map(\.message) == [
        "left as it is: no regular partial file the blob names is in \(directory.standardizedFileURL.path) to truncate"
      ])
    let size =
      try FileManager.default.attributesOfItem(
        atPath: directory.appendingPathComponent("elsewhere.bin").path)[.size] as? Int
    #expect(size == 4_194_304)
  }
}

import Foundation
import ResumeData
@_spi(Differential) import ResumeDataBatch
import TestSupport
import Testing

@Suite("Healthy keyed and v2 blobs in a batch")
struct HealthyBlobBatchTests {
  /// Every operation the one pass may answer for: a diagnosis, and a repair for each target.
  static let operations: [BatchOptions.Operation] =
    [.diagnose] + RepairTarget.allCases.map { .repair($0) }

  /// Every blob and archive fixture, and the healthy keyed and v2 fixtures with bytes flipped
  /// across them.
  static func blobs() throws -> [Data] {
    var blobs = try blobAndArchiveFixtures().map { try fixture($0) }
    for name in [
      "repair/hand-off-segments.after.archive", "resume/keyed-v4.archive", "resume/v2.xml.plist",
      "resume/v2.binary.plist",
    ] {
      let healthy = try fixture(name)
      for position in stride(from: 0, to: healthy.count, by: 13) {
        var flipped = healthy
        flipped[position] ^= position % 2 == 0 ? 0x01 : 0x80
        blobs.append(flipped)
      }
    }
    return blobs
  }

  @Test(
    "Answered in one pass or decoded, every record gets the same result line",
    arguments: operations)
  func sameResults(operation: BatchOptions.Operation) throws {
    let blobs = try Self.blobs()
    let records = blobs.enumerated().map { record($0.offset, $0.element) }
    let onePass = BatchPipeline(
      options: BatchOptions(operation: operation), inputName: "-", jobs: 1)
    var decoding = BatchOptions(operation: operation)
    decoding.answersHealthyBlobsInOnePass = false
    let decoded = BatchPipeline(options: decoding, inputName: "-", jobs: 1)
    for (index, record) in records.enumerated() {
      #expect(
        onePass.process(record, line: index + 1) == decoded.process(record, line: index + 1),
        "record \(index)")
    }
    // The one pass answers for the healthy fixtures and many of their flips (a byte no check
    // reads), for every operation but a repair for a system that reads no keyed blob.
    let target: RepairTarget? =
      switch operation {
      case .repair(let target): target
      default: nil
      }
    let answered = blobs.filter { ResumeData.healthyKeyedBlob($0, for: target) != nil }.count
    let readsKeyedBlobs = target.map { [.ios12, .ios13Later, .linux].contains($0) } ?? true
    #expect((answered > 0) == readsKeyedBlobs)
    // And a healthy v2 blob for every operation but a repair for iOS 10.0–10.1 (its requests
    // rewritten) or for Network.framework (which reads no v2 blob).
    let answeredPlain = blobs.filter {
      if case .healthy? = try? ResumeData.reading($0, for: target) { true } else { false }
    }.count
    #expect((answeredPlain > 0) == (target != .ios10Early && target != .networkFramework))
  }
}

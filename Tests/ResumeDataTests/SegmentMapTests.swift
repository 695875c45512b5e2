import Foundation
import ResumeData
import TestSupport
import Testing

@Suite("Segment map: the text form resume data records")
struct SegmentMapTests {
  @Test(
    "Reads and writes the form",
    arguments: [
      ("bytes=/100", 100, [Range<Int64>]()),
      ("bytes=0-9/100", 100, [0..<10]),
      ("bytes=0-9,20-29/100", 100, [0..<10, 20..<30]),
      ("bytes=90-99/100", 100, [90..<100]),
      ("bytes=/0", 0, []),
    ] as [(String, Int64, [Range<Int64>])])
  func roundTrip(text: String, total: Int64, ranges: [Range<Int64>]) throws {
    let map = try SegmentMap(parsing: text)
    #expect(map.total == total)
    #expect(map.onDisk == ranges)
    #expect(map.description == text)
  }

  @Test(
    "Refuses what is not the form, saying where",
    arguments: [
      ("0-9/100", "it must start with bytes=", 1),
      ("bytes=0-9", "'/' and the total length were expected", 10),
      ("bytes=0-9;20-29/100", "',' or '/' was expected", 10),
      ("bytes=9-0/100", "the range ends before it starts", 10),
      ("bytes=20-29,0-9/100", "the ranges must ascend and stay apart", 16),
      ("bytes=0-9,10-19/100", "the ranges must ascend and stay apart", 16),
      ("bytes=0-99/50", "a range ends past the total length 50", 7),
      ("bytes=0-9/100x", "nothing may follow the total length", 14),
      ("bytes=0-99999999999999999999/100", "the number does not fit in 63 bits", 27),
      ("bytes=-9/100", "a number was expected", 7),
    ] as [(String, String, Int)])
  func malformed(text: String, message: String, character: Int) {
    #expect(
      throws: ResumeDataError(
        .invalidValue,
        "the segment map \(String(reflecting: text)) is malformed at character \(character): \(message)",
        at: ResumeDataKey.segments)
    ) {
      try SegmentMap(parsing: text)
    }
  }

  @Test("Merges, clips and measures")
  func arithmetic() {
    let map = SegmentMap(total: 100, onDisk: [50..<60, 0..<10, 5..<20, 95..<120, 30..<30])
    #expect(map.onDisk == [0..<20, 50..<60, 95..<100])
    #expect(map.contiguousPrefix == 20)
    #expect(map.bytesOnDisk == 35)
    #expect(map.missing == [20..<50, 60..<95])
    #expect(!map.isComplete)
    #expect(map.truncated(to: 55).onDisk == [0..<20, 50..<55])
    #expect(SegmentMap(total: 10, onDisk: [0..<10]).isComplete)
    #expect(SegmentMap(total: 10, onDisk: [1..<10]).contiguousPrefix == 0)
  }
}

@Suite("Segmented blobs in conversion")
struct SegmentedConversionTests {
  @Test(
    "Every dictionary form carries the segment map; Network.framework's refuses the blob",
    arguments: [ResumeDataGeneration.v1, .v2, .v4, .keyed, .safari, .networkFramework])
  func conversion(target: ResumeDataGeneration) throws {
    let blob = try ResumeData(
      decoding: try Data(
        contentsOf: repositoryRoot.appendingPathComponent("Fixtures/resume/segmented.archive")))
    let map = "bytes=0-1048575,2097152-3145727/4194304"
    #expect(blob.segments == map)
    guard target != .networkFramework else {
      #expect(
        throws: ResumeDataError(
          .unsupported,
          "the blob is of a download over several connections, whose segment map Network.framework's form cannot carry: resume it with this toolkit, or truncate its partial file to BytesReceived and remove the map first",
          at: ResumeDataKey.segments)
      ) {
        try blob.converted(to: target, temporaryDirectory: URL(fileURLWithPath: "/tmp"))
      }
      return
    }
    let converted = try blob.converted(to: target, temporaryDirectory: URL(fileURLWithPath: "/tmp"))
    #expect(converted.blob.segments == map)
    #expect(converted.blob.bytesReceived == 1_048_576)
  }
}

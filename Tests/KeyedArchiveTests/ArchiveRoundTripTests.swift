import Foundation
import KeyedArchive
import PropertyList
import TestSupport
import Testing

@Suite(
  "Apple-made archives",
  .enabled(
    if: peerSuitesPresent, "../shared/peer-suites is absent: Apple-made archive tests skipped"))
struct ArchiveRoundTripTests {
  @Test("Decode then encode reproduces the bytes", arguments: appleArchives)
  func byteExact(path: String) throws {
    let bytes = try Data(contentsOf: peerSuites.appendingPathComponent(path))
    let archive = try KeyedArchive(decoding: bytes)
    #expect(try archive.encoded() == bytes)
  }
}

extension ArchiveRoundTripTests {
  /// Without the original bytes (an archive built from its property list), the writer's default
  /// sharing rules alone must reproduce Apple's bytes.
  @Test("The default sharing rules alone reproduce the bytes", arguments: appleArchives)
  func defaultsReproduce(path: String) throws {
    let bytes = try Data(contentsOf: peerSuites.appendingPathComponent(path))
    let plist = try PropertyListValue.decode(bytes).value
    #expect(try KeyedArchive(propertyList: plist).encoded() == bytes)
  }
}

import Foundation
@_spi(Differential) import KeyedArchive
import PropertyList
import TestSupport
import Testing

/// Inputs the keyed-archive fuzzer found (Tests/KeyedArchiveTests/FuzzRegressions), each named for
/// what it pins: request archives whose `$2` slot count is huge, negative or too small.
let archiveFuzzRegressions = filesInRepository("Tests/KeyedArchiveTests/FuzzRegressions")

/// A file of `Tests/KeyedArchiveTests/FuzzRegressions`.
func fuzzRegression(_ name: String) throws -> Data {
  try Data(
    contentsOf: repositoryRoot.appendingPathComponent("Tests/KeyedArchiveTests/FuzzRegressions")
      .appendingPathComponent(name))
}

@Suite("Keyed-archive fuzz regressions")
struct ArchiveFuzzRegressionTests {
  @Test("The regressions folder holds the fuzzer's finds") func present() {
    #expect(archiveFuzzRegressions.count >= 5)
  }

  /// The fuzz harness's properties: an archive that reads re-encodes to an equal one; a request
  /// converts between layouts and takes a new URL, or refuses cleanly; nothing traps or hangs.
  @Test(
    "Each find is refused cleanly or keeps the harness's properties",
    arguments: archiveFuzzRegressions)
  func replay(name: String) throws {
    let data = try fuzzRegression(name)
    let archive: KeyedArchive
    do {
      archive = try KeyedArchive(decoding: data)
    } catch is KeyedArchiveError {
      return
    }
    #expect(
      try KeyedArchive(decoding: try archive.encoded(as: .binary)).propertyList
        == archive.propertyList)
    // A layout conversion by renaming in place reads back in the other layout with the rebuilt
    // conversion's URL (one find: a string whose bytes ran over a renamed key's).
    if let request = try? URLRequestArchive(decoding: data) {
      let target: URLRequestArchive.Layout =
        request.layout == .standard ? .dollarNumbered : .standard
      if let renamed = request.renamedInPlace(to: target) {
        let reread = try URLRequestArchive(decoding: renamed)
        // As rebuilding gives it: a `$2` below the slots' count keeps the keys past it (another
        // find), and may keep the layout.
        let rebuilt = try? request.converted(to: target)
        #expect(reread.layout == rebuilt?.layout ?? target)
        #expect(reread.url == rebuilt?.url)
        // The whole graph as rebuilding gives it (one find: `$top` held as a field's value too,
        // its key renamed there as well).
        if let rebuilt {
          #expect((try? reread.archive.decodeRoot()) == (try? rebuilt.archive.decodeRoot()))
        }
      }
    }
    // Each object the sub-archive writer archives from the bytes is what archiving its decoded
    // value writes, and decodes (one find: a URL's base of UID 0, which decodes to nil).
    for (uid, fromBytes) in SubArchiveDifferential.archivedAsRoot(data, firstObjects: 48) ?? [:] {
      let decoded = try KeyedArchive(root: archive.decodeValue(uid)).encoded()
      #expect(firstDifference(fromBytes, decoded) == nil, "object \(uid)")
    }
    guard let request = try? URLRequestArchive(archive: archive) else { return }
    #expect(request.slotCount <= 4_096)
    if let converted = try? request.converted(to: .dollarNumbered) {
      _ = try? converted.converted(to: .standard)
    }
    if let edited = try? request.settingURL("https://example.com/x") {
      #expect(try URLRequestArchive(decoding: try edited.encoded()).url == "https://example.com/x")
    } else {
      // Refused only for want of a URL slot, or for a graph that does not decode.
      #expect(request.slotCount <= 1 || (try? archive.decodeRoot()) == nil)
    }
  }
}

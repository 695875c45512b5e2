import Foundation
import KeyedArchive
@_spi(Differential) import ResumeData
import TestSupport
import Testing

/// Inputs the resume-data fuzzer found (Tests/ResumeDataTests/FuzzRegressions), each named for what
/// it pins.
let resumeFuzzRegressions = filesInRepository("Tests/ResumeDataTests/FuzzRegressions")

/// The blob a resume-data fuzz find holds, when it reads as one.
func resumeFuzzFind(_ name: String) throws -> ResumeData? {
  let data = try Data(
    contentsOf: repositoryRoot.appendingPathComponent("Tests/ResumeDataTests/FuzzRegressions")
      .appendingPathComponent(name))
  return try? ResumeData(decoding: data)
}

@Suite("Resume-data fuzz regressions")
struct ResumeFuzzRegressionTests {
  @Test("The regressions folder holds the fuzzer's finds") func present() {
    #expect(resumeFuzzRegressions.count >= 1)
  }

  /// The fuzz harness's other property: the fast path reads each find exactly as the eager path
  /// does (a NaN date once made a blob unequal to itself).
  @Test("Each find reads the same on both paths", arguments: resumeFuzzRegressions)
  func bothPaths(name: String) throws {
    let data = try Data(
      contentsOf: repositoryRoot.appendingPathComponent("Tests/ResumeDataTests/FuzzRegressions")
        .appendingPathComponent(name))
    #expect(ResumeDifferential.difference(data) == nil)
    if let resume = try? ResumeData(decoding: data) { #expect(resume == resume) }
  }

  /// The fuzz harness's first check: what the writer makes from a blob's bytes (a
  /// Network.framework blob's requests and response archived on their own, its root's entries) is
  /// what it makes from the decoded tree.
  @Test(
    "Each find is written alike from its bytes and from its tree", arguments: resumeFuzzRegressions)
  func writer(name: String) throws {
    guard let resume = try resumeFuzzFind(name) else { return }
    #expect(ResumeDifferential.writerDifference(resume) == nil)
  }

  /// The fuzz harness's property: a blob that reads re-encodes in its own form to one that reads
  /// the same.
  @Test("Each find is refused cleanly or round-trips", arguments: resumeFuzzRegressions)
  func replay(name: String) throws {
    let data = try Data(
      contentsOf: repositoryRoot.appendingPathComponent("Tests/ResumeDataTests/FuzzRegressions")
        .appendingPathComponent(name))
    guard let resume = try? ResumeData(decoding: data) else { return }
    _ = resume.findings()
    let again = try ResumeData(decoding: try resume.encoded())
    #expect(again.generation == resume.generation)
    #expect(again.container == resume.container)
    #expect(again.entries == resume.entries)
    // Whatever a repair produces reads back as resume data.
    for target in RepairTarget.allCases {
      if let repaired = try? resume.repaired(for: target).blob {
        #expect(throws: Never.self, "\(target)") {
          _ = try ResumeData(decoding: repaired.encoded())
        }
      }
    }
  }

  @Test(
    "A keyed root's repeated key stands where its last value does, as the archive written back reads"
  )
  func repeatedRootKey() throws {
    // `NS.keys` names BytesReceived second and sixth; an iOS 12 repair adds the original request.
    let blob = try #require(
      try resumeFuzzFind("keyed-root-repeated-key-edited-for-ios12-from-fuzzer"))
    #expect(
      blob.entries.keys == [
        ResumeDataKey.downloadURL, ResumeDataKey.currentRequest,
        "NSURLSessionRequmeOriginalRequest", ResumeDataKey.entityTag, ResumeDataKey.bytesReceived,
        ResumeDataKey.tempFileName,
      ])
    #expect(blob.bytesReceived == 4)
    let repaired = try #require(try blob.repaired(for: .ios12).blob)
    #expect(repaired.entries.keys == blob.entries.keys + [ResumeDataKey.originalRequest])
    let read = try ResumeData(decoding: try repaired.encoded(keepingUntouchedBytes: true))
    #expect(read.entries == repaired.entries)
    #expect(read.entries.keys == repaired.entries.keys)
  }

  @Test("A plain blob whose info version says nothing is v2 once its ByteRange is removed")
  func unknownInfoVersionLosesByteRange() throws {
    // Info version 8, a ByteRange and a TempFileName: v4 by its keys. The iOS 11.0-11.2 repair
    // removes the ByteRange, and the blob is then v2, as its bytes read back.
    let blob = try #require(
      try resumeFuzzFind("plain-unknown-info-version-byte-range-removed-for-ios11-from-fuzzer"))
    #expect(blob.generation == .v4)
    #expect(blob.infoVersion == 8)
    let repaired = try #require(try blob.repaired(for: .ios11Early).blob)
    #expect(repaired.byteRange == nil)
    #expect(repaired.generation == .v2)
    #expect(try ResumeData(decoding: try repaired.encoded()).generation == .v2)
  }

  /// Each object names the next one twice, so that decoding the root visits 2^depth objects; its
  /// class is checked first, and it is refused before any of them is visited. Under a limit of
  /// eight visits, decoding first would report the limit instead. Masked as Network.framework's,
  /// its root's class is not an `NWURLSession…` one, which is known as early.
  @Test(
    "A keyed root of the wrong class is refused by its class, before its graph is decoded",
    arguments: [false, true], [KeyedArchiveLimits.default, KeyedArchiveLimits(maximumVisits: 8)])
  func rootOfTheWrongClass(masked: Bool, limits: KeyedArchiveLimits) throws {
    var data = try Data(
      contentsOf: repositoryRoot.appendingPathComponent("Tests/ResumeDataTests/FuzzRegressions")
        .appendingPathComponent("keyed-root-not-dictionary-shared-exponentially-from-fuzzer"))
    if masked { data = NetworkFrameworkMask.toggled(data) }
    for decode in [ResumeData.init(decoding:limits:), ResumeData.init(decodingEagerly:limits:)] {
      let error = try #require(throws: ResumeDataError.self) { try decode(data, limits) }
      #expect(error.code == (masked ? .notResumeData : .keyedArchive))
      #expect(
        error.description
          == (masked
            ? "$top.root: the masked archive's root is not an NWURLSessionResumeInfo"
            : "$top.root: the root is not a dictionary"))
    }
  }
}

import Foundation
@_spi(Differential) import KeyedArchive
import PropertyList
@_spi(Differential) import ResumeData
import TestSupport
import Testing

/// The two ways a blob is read: `ResumeData(decoding:)` (in place when it can), and the eager path.
enum ResumePaths {
  /// Where the two paths' outcomes differ, or nil when both fail with the same error or both read
  /// the same typed fields, requests and findings, equal blobs and archives, and the same encoding.
  static func difference(_ data: Data) -> String? {
    let fast = Result { try ResumeData(decoding: data) }.mapError { $0 as! ResumeDataError }
    let eager = Result { try ResumeData(decodingEagerly: data) }.mapError {
      $0 as! ResumeDataError
    }
    switch (fast, eager) {
    case (.failure(let fast), .failure(let eager)):
      return fast == eager ? nil : "errors differ: \(fast) vs \(eager)"
    case (.success(let fast), .success(let eager)):
      // Typed fields first, so that they are read before anything decodes the fast archives.
      if let field = typedDifference(fast, eager) { return "\(field) differs" }
      if fast != eager || fast.archive != eager.archive { return "blobs differ" }
      if (try? fast.encoded()) != (try? eager.encoded()) { return "encodings differ" }
      return nil
    case (.success, .failure(let error)):
      return "fast path accepts what the eager path refuses: \(error)"
    case (.failure(let error), .success):
      return "fast path refuses what the eager path accepts: \(error)"
    }
  }

  static func typedDifference(_ lhs: ResumeData, _ rhs: ResumeData) -> String? {
    func request(_ request: URLRequestArchive?) -> [AnyHashable?] {
      guard let request else { return [] }
      return [
        request.url, request.httpMethod, request.headerFields.map { [$0.name, $0.value] },
        request.timeoutInterval?.bitPattern, request.rootKey, request.layout, request.body,
        request.className, request.slotCount,
      ]
    }
    let fields: [(String, (ResumeData) -> AnyHashable?)] = [
      ("generation", { $0.generation }), ("container", { $0.container }),
      ("entries", { $0.entries }), ("entry order", { $0.entries.keys }),
      ("archivedEntries", { $0.archivedEntries }), ("downloadURL", { $0.downloadURL }),
      ("bytesReceived", { $0.bytesReceived }), ("entityTag", { $0.entityTag }),
      ("serverDownloadDate", { $0.serverDownloadDate }), ("tempFileName", { $0.tempFileName }),
      ("localPath", { $0.localPath }), ("byteRange", { $0.byteRange }),
      ("infoVersion", { $0.infoVersion }), ("unknownKeys", { $0.unknownKeys }),
      ("currentRequest", { request($0.currentRequest) }),
      ("originalRequest", { request($0.originalRequest) }), ("findings", { $0.findings() }),
    ]
    return fields.first { $0.1(lhs) != $0.1(rhs) }?.0
  }
}

/// Every file under a fixture folder, recursively.
func allFixtures(_ folder: String) -> [String] {
  let root = repositoryRoot.appendingPathComponent("Fixtures").appendingPathComponent(folder)
  let paths = FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String } ?? []
  return paths.filter { path in
    var isDirectory: ObjCBool = false
    let exists = FileManager.default.fileExists(
      atPath: root.appendingPathComponent(path).path, isDirectory: &isDirectory)
    return exists && !isDirectory.boolValue
  }.map { folder + "/" + $0 }.sorted()
}

@Suite("Resume fast path")
struct ResumeFastPathTests {
  @Test(
    "Every fixture reads the same on both paths",
    arguments: allFixtures("resume") + allFixtures("repair") + allFixtures("archive"))
  func fixtures(_ file: String) throws {
    #expect(ResumePaths.difference(try fixture(file)) == nil)
  }

  @Test("Built blobs of every generation read the same on both paths")
  func builtBlobs() throws {
    for blob in try blobs() {
      #expect(ResumePaths.difference(blob.bytes) == nil, "\(blob.name)")
    }
  }

  @Test(
    "Binary keyed blobs with plain values are read in place",
    arguments: ["resume/keyed-v4.archive", "resume/keyed-v5-response.archive"])
  func readInPlace(_ file: String) throws {
    let blob = try ResumeData(decoding: fixture(file))
    #expect(blob.isReadInPlace)
    #expect(blob.currentRequest?.isReadInPlace == true)
    _ = blob.findings()
    #expect(blob.isReadInPlace, "diagnosis needs no archive")
    _ = blob.archive
    #expect(!blob.isReadInPlace)
  }

  @Test("Every truncation of a keyed blob reads the same on both paths")
  func truncations() throws {
    let data = try fixture("resume/keyed-v4.archive")
    for length in stride(from: 0, to: data.count, by: 7) {
      #expect(ResumePaths.difference(data.prefix(length)) == nil, "truncated to \(length) bytes")
    }
  }

  @Test("Bytes flipped across a keyed blob read the same on both paths")
  func mutations() throws {
    let data = try fixture("resume/keyed-v4.archive")
    for position in stride(from: 0, to: data.count, by: 3) {
      var mutated = data
      mutated[position] ^= position % 2 == 0 ? 0x01 : 0x80
      #expect(ResumePaths.difference(mutated) == nil, "byte \(position)")
    }
  }
}

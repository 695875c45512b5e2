import Foundation
import KeyedArchive
import PropertyList
import TestSupport
import Testing

/// An archive's objects are checked once while unchanged: changed objects are checked again
/// before they are encoded or given another root.
@Suite("Archive checks")
struct ArchiveCheckTests {
  static func archive() throws -> KeyedArchive {
    try KeyedArchive(decoding: fixture("archive/foundation/mutable-dictionary.archive"))
  }

  @Test("Another root of checked objects is checked for range alone")
  func otherRoot() throws {
    let archive = try Self.archive()
    let count = UInt64(archive.objects.count)
    let view = try KeyedArchive(objectsOf: archive, rootKey: "root", rootUID: count - 1)
    #expect(view.objects == archive.objects)
    #expect(view.rootKey == "root")
    #expect(view.rootUID == count - 1)
    let error = #expect(throws: KeyedArchiveError.self) {
      try KeyedArchive(objectsOf: archive, rootKey: "root", rootUID: count)
    }
    #expect(error?.code == .uidOutOfRange)
    #expect(error?.keyPath == "$top.root")
  }

  @Test("Objects changed after reading are checked again, to encode or to take another root")
  func changedObjects() throws {
    var archive = try Self.archive()
    // An object that names one past the end.
    let last = archive.objects.count
    archive.objects.append(.array([.uid(UInt64(last + 1))]))
    let encoding = #expect(throws: KeyedArchiveError.self) { try archive.encoded() }
    #expect(encoding?.code == .uidOutOfRange)
    #expect(encoding?.keyPath == "$objects[\(last)][0]")
    let view = #expect(throws: KeyedArchiveError.self) {
      try KeyedArchive(objectsOf: archive, rootKey: "root", rootUID: 1)
    }
    #expect(view?.code == .uidOutOfRange)
    #expect(view?.keyPath == "$objects[\(last)][0]")
  }
}

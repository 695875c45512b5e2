import Foundation
import TestSupport

/// Apple-made keyed archives in the peer suites, relative to the suites' root.
let appleArchives: [String] = {
  let folder = "swift-corelibs-foundation/Tests/Foundation/Resources/"
  let fixtures =
    (try? FileManager.default.contentsOfDirectory(
      atPath: peerSuites.path + "/" + folder + "Fixtures/macOS-10.14")) ?? []
  return fixtures.sorted().map { folder + "Fixtures/macOS-10.14/" + $0 }
    + [
      folder + "NSKeyedUnarchiver-ComplexTest.plist",
      "rust-plist/tests/data/binary_NSKeyedArchiver.plist",
    ]
}()

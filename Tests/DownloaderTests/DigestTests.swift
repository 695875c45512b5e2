import Downloader
import Foundation
import Testing

@Suite("Streaming digests")
struct DigestTests {
  @Test(
    "Known answers (FIPS 180 and RFC 1321 test vectors)",
    arguments: [
      (
        DigestAlgorithm.sha256, "abc",
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
      ),
      (.sha256, "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
      (.sha1, "abc", "a9993e364706816aba3e25717850c26c9cd0d89d"),
      (.md5, "abc", "900150983cd24fb0d6963f7d28e17f72"),
      (.md5, "", "d41d8cd98f00b204e9800998ecf8427e"),
    ])
  func knownAnswers(algorithm: DigestAlgorithm, input: String, hex: String) throws {
    let digest = try StreamingDigest.digest(algorithm, of: Data(input.utf8))
    #expect(digest.hexString == hex)
    #expect(digest.count == algorithm.length)
  }

  @Test("Feeding in pieces gives the digest of the whole, and current() does not end it")
  func pieces() throws {
    let bytes = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    let whole = try StreamingDigest.digest(.sha256, of: bytes)
    var digest = try StreamingDigest(.sha256)
    var offset = 0
    for size in [0, 1, 7, 4096, 65_536] {
      digest.update(bytes[offset..<min(offset + size, bytes.count)])
      offset = min(offset + size, bytes.count)
    }
    let prefix = try StreamingDigest.digest(.sha256, of: bytes.prefix(offset))
    #expect(digest.current() == prefix)
    digest.update(bytes[offset...])
    #expect(digest.finalize() == whole)
  }

  @Test("The million-a test vector of SHA-256")
  func millionA() throws {
    var digest = try StreamingDigest(.sha256)
    let chunk = Data(repeating: UInt8(ascii: "a"), count: 1000)
    for _ in 0..<1000 { digest.update(chunk) }
    #expect(
      digest.finalize().hexString
        == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
  }
}

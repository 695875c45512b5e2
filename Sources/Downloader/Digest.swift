import CCryptoShim
import Foundation

/// A message-digest algorithm, computed by OpenSSL's libcrypto.
public enum DigestAlgorithm: String, Sendable, Hashable, CaseIterable {
  /// SHA-256 (32 bytes).
  case sha256
  /// SHA-1 (20 bytes), for servers and manifests that still publish it.
  case sha1
  /// MD5 (16 bytes), for the same reason; never for security.
  case md5

  /// The digest's length in bytes.
  public var length: Int {
    switch self {
    case .sha256: 32
    case .sha1: 20
    case .md5: 16
    }
  }

  var shimAlgorithm: rd_digest_algorithm {
    switch self {
    case .sha256: RD_DIGEST_SHA256
    case .sha1: RD_DIGEST_SHA1
    case .md5: RD_DIGEST_MD5
    }
  }
}

/// A digest computed over bytes fed in pieces, as a download arrives.
///
/// Non-copyable: it owns libcrypto's context, which is freed exactly once, and a digest in
/// progress cannot be shared by accident.
public struct StreamingDigest: ~Copyable, @unchecked Sendable {
  // Owned uniquely (the type cannot be copied), so sending it to another task is safe.
  private let context: OpaquePointer
  /// The algorithm.
  public let algorithm: DigestAlgorithm

  /// Starts a digest.
  ///
  /// - Throws: `DigestError` when libcrypto cannot provide the algorithm.
  public init(_ algorithm: DigestAlgorithm) throws(DigestError) {
    guard let context = rd_digest_new(algorithm.shimAlgorithm) else {
      throw DigestError(message: "libcrypto cannot compute \(algorithm.rawValue)")
    }
    self.context = context
    self.algorithm = algorithm
  }

  deinit {
    rd_digest_free(context)
  }

  /// Feeds bytes.
  public mutating func update(_ bytes: UnsafeRawBufferPointer) {
    guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
    // libcrypto's update only fails on a broken context, which `init` never hands out.
    _ = rd_digest_update(context, base, bytes.count)
  }

  /// Feeds the bytes of `data`.
  public mutating func update(_ data: Data) {
    data.withUnsafeBytes { update($0) }
  }

  /// The digest of everything fed so far, leaving this one open for more.
  public func current() -> [UInt8] {
    guard let copy = rd_digest_copy(context) else { return [] }
    defer { rd_digest_free(copy) }
    return Self.final(copy)
  }

  /// The digest of everything fed; the digest ends here.
  public consuming func finalize() -> [UInt8] {
    Self.final(context)
  }

  private static func final(_ context: OpaquePointer) -> [UInt8] {
    var output = [UInt8](repeating: 0, count: 64)
    var length: UInt32 = 0
    guard rd_digest_final(context, &output, &length) == 1 else { return [] }
    return Array(output.prefix(Int(length)))
  }

  /// The digest of a whole buffer in one call.
  ///
  /// - Throws: `DigestError` when libcrypto cannot provide the algorithm.
  public static func digest(_ algorithm: DigestAlgorithm, of data: Data) throws(DigestError)
    -> [UInt8]
  {
    var digest = try StreamingDigest(algorithm)
    digest.update(data)
    return digest.finalize()
  }
}

/// A digest that could not be computed.
public struct DigestError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What went wrong.
  public var message: String
  /// The message.
  public var description: String { message }
}

extension Array where Element == UInt8 {
  /// The bytes as lowercase hexadecimal.
  public var hexString: String {
    let digits = Array("0123456789abcdef".utf8)
    var text = [UInt8]()
    text.reserveCapacity(count * 2)
    for byte in self {
      text.append(digits[Int(byte >> 4)])
      text.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: text, as: UTF8.self)
  }
}

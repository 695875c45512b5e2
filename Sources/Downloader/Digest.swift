import Foundation

/// A message-digest algorithm, computed by OpenSSL's libcrypto (CryptoKit on Apple platforms).
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
}

/// A digest computed over bytes fed in pieces, as a download arrives.
///
/// Non-copyable: it owns its engine's context (libcrypto's), which is freed exactly once, and a
/// digest in progress cannot be shared by accident. See DigestEngine.swift for which engine.
public struct StreamingDigest: ~Copyable, @unchecked Sendable {
  // Owned uniquely (the type cannot be copied), so sending it to another task is safe.
  private var engine: DigestEngine
  /// The algorithm.
  public let algorithm: DigestAlgorithm

  /// Starts a digest.
  ///
  /// - Throws: `DigestError` when libcrypto cannot provide the algorithm.
  public init(_ algorithm: DigestAlgorithm) throws(DigestError) {
    engine = try DigestEngine(algorithm)
    self.algorithm = algorithm
  }

  /// Feeds bytes.
  public mutating func update(_ bytes: UnsafeRawBufferPointer) {
    engine.update(bytes)
  }

  /// Feeds the bytes of `data`.
  public mutating func update(_ data: Data) {
    data.withUnsafeBytes { update($0) }
  }

  /// The digest of everything fed so far, leaving this one open for more.
  public func current() -> [UInt8] {
    engine.current()
  }

  /// The digest of everything fed; the digest ends here.
  public consuming func finalize() -> [UInt8] {
    engine.finalize()
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

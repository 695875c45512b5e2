// The one place the downloader chooses who computes its digests: CryptoKit on Apple platforms
// (which ship no libcrypto), OpenSSL's libcrypto through CCryptoShim everywhere else. Package.swift
// names CCryptoShim for the platforms other than Apple's, so the two conditions must stay alike.
// The CryptoKit branch is prepared, not built: no Apple SDK is available to this package's CI.
#if canImport(CryptoKit)
  import CryptoKit
#else
  import CCryptoShim
#endif

#if canImport(CryptoKit)
  /// A digest in progress, in CryptoKit.
  struct DigestEngine: ~Copyable {
    // CryptoKit's hash functions are values: a copy is a snapshot of the digest so far.
    private enum Function {
      case sha256(SHA256)
      case sha1(Insecure.SHA1)
      case md5(Insecure.MD5)
    }

    private var function: Function

    /// Starts a digest; CryptoKit provides every algorithm.
    init(_ algorithm: DigestAlgorithm) throws(DigestError) {
      switch algorithm {
      case .sha256: function = .sha256(SHA256())
      case .sha1: function = .sha1(Insecure.SHA1())
      case .md5: function = .md5(Insecure.MD5())
      }
    }

    /// Feeds bytes.
    mutating func update(_ bytes: UnsafeRawBufferPointer) {
      switch function {
      case .sha256(var hash):
        hash.update(bufferPointer: bytes)
        function = .sha256(hash)
      case .sha1(var hash):
        hash.update(bufferPointer: bytes)
        function = .sha1(hash)
      case .md5(var hash):
        hash.update(bufferPointer: bytes)
        function = .md5(hash)
      }
    }

    /// The digest of everything fed so far, leaving this one open.
    func current() -> [UInt8] {
      switch function {
      case .sha256(let hash): Array(hash.finalize())
      case .sha1(let hash): Array(hash.finalize())
      case .md5(let hash): Array(hash.finalize())
      }
    }

    /// The digest of everything fed.
    consuming func finalize() -> [UInt8] { current() }
  }
#else
  /// A digest in progress, in libcrypto.
  ///
  /// Non-copyable: it owns libcrypto's context, which is freed exactly once.
  struct DigestEngine: ~Copyable {
    private let context: OpaquePointer

    /// Starts a digest.
    ///
    /// - Throws: `DigestError` when libcrypto cannot provide the algorithm.
    init(_ algorithm: DigestAlgorithm) throws(DigestError) {
      let shimAlgorithm: rd_digest_algorithm =
        switch algorithm {
        case .sha256: RD_DIGEST_SHA256
        case .sha1: RD_DIGEST_SHA1
        case .md5: RD_DIGEST_MD5
        }
      guard let context = rd_digest_new(shimAlgorithm) else {
        throw DigestError(message: "libcrypto cannot compute \(algorithm.rawValue)")
      }
      self.context = context
    }

    deinit {
      rd_digest_free(context)
    }

    /// Feeds bytes.
    mutating func update(_ bytes: UnsafeRawBufferPointer) {
      guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
      // libcrypto's update only fails on a broken context, which `init` never hands out.
      _ = rd_digest_update(context, base, bytes.count)
    }

    /// The digest of everything fed so far, leaving this one open for more.
    func current() -> [UInt8] {
      guard let copy = rd_digest_copy(context) else { return [] }
      defer { rd_digest_free(copy) }
      return Self.final(copy)
    }

    /// The digest of everything fed; the digest ends here.
    consuming func finalize() -> [UInt8] {
      Self.final(context)
    }

    private static func final(_ context: OpaquePointer) -> [UInt8] {
      var output = [UInt8](repeating: 0, count: 64)
      var length: UInt32 = 0
      guard rd_digest_final(context, &output, &length) == 1 else { return [] }
      return Array(output.prefix(Int(length)))
    }
  }
#endif

import PortableFoundation

/// Network.framework's resume blobs are a keyed archive whose first 8 bytes are XORed with ASCII
/// `TedLasso` (format reference §1 and §7), so that a blob starts `36 15 08 25 12 07 43 5F`.
public enum NetworkFrameworkMask {
  /// The mask.
  public static let key: [UInt8] = Array("TedLasso".utf8)
  /// `bplist00` masked: how every Network.framework blob begins.
  public static let maskedMagic: [UInt8] = zip(Array("bplist00".utf8), key).map { $0 ^ $1 }

  /// Whether the bytes begin like a masked Network.framework blob.
  public static func isMasked(_ bytes: Data) -> Bool {
    // Through the buffer: `starts(with:)` walks a Data with its iterator, a byte at a time.
    bytes.withUnsafeBytes { isMasked(bytes: $0) }
  }

  /// `isMasked(_:)` of bytes in memory.
  public static func isMasked(bytes: UnsafeRawBufferPointer) -> Bool {
    bytes.count >= 8
      && maskedMagic.withUnsafeBytes { magic in
        memcmp(bytes.baseAddress!, magic.baseAddress!, 8) == 0
      }
  }

  /// The bytes with their first 8 XORed with the mask (masking and unmasking are the same operation).
  public static func toggled(_ bytes: Data) -> Data {
    var copy = bytes
    // Through the buffer: each subscript of a `Data` checks its index and uniqueness, which for
    // eight bytes cost several times the copy.
    copy.withUnsafeMutableBytes { bytes in
      for offset in 0..<min(8, bytes.count) {
        bytes[offset] ^= UInt8(truncatingIfNeeded: maskBits >> (8 * offset))
      }
    }
    return copy
  }

  // The mask's bytes, the first in the low bits.
  private static let maskBits: UInt64 = {
    var bits: UInt64 = 0
    for (offset, byte) in key.enumerated() { bits |= UInt64(byte) << (8 * offset) }
    return bits
  }()
}

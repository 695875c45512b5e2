import Foundation

/// Base64 as `Data.base64EncodedData()` writes it (RFC 4648's alphabet, padded, on one line),
/// for `batch`, which writes a blob's base64 into every result: Foundation's encoder cost about a
/// tenth of a record's time there.
enum Base64Encoding {
  private static let alphabet = Array(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
  // Every 12-bit value as its two characters, in the order they are stored: half the lookups.
  private static let pairs: [UInt16] = (0..<4096).map { value in
    (UInt16(alphabet[value >> 6]) | UInt16(alphabet[value & 0x3F]) << 8).littleEndian
  }

  /// The base64 of `data`.
  static func encode(_ data: Data) -> Data {
    let groups = data.count / 3
    let remainder = data.count % 3
    // Cannot overflow: `data` is in memory.
    let length = 4 * (groups + (remainder > 0 ? 1 : 0))
    var encoded = Data(count: length)
    encoded.withUnsafeMutableBytes { out in
      data.withUnsafeBytes { input in
        alphabet.withUnsafeBufferPointer { table in
          pairs.withUnsafeBufferPointer { pairs in
            encode(input, table: table, pairs: pairs, into: out)
          }
        }
      }
    }
    return encoded
  }

  // The loop, apart from the closures so that its state stays in registers.
  private static func encode(
    _ input: UnsafeRawBufferPointer, table: UnsafeBufferPointer<UInt8>,
    pairs: UnsafeBufferPointer<UInt16>, into out: UnsafeMutableRawBufferPointer
  ) {
    var read = 0
    var written = 0
    let whole = input.count - input.count % 3
    while read < whole {
      let group =
        UInt32(input[read]) << 16 | UInt32(input[read &+ 1]) << 8 | UInt32(input[read &+ 2])
      out.storeBytes(of: pairs[Int(group >> 12)], toByteOffset: written, as: UInt16.self)
      out.storeBytes(of: pairs[Int(group & 0xFFF)], toByteOffset: written &+ 2, as: UInt16.self)
      read &+= 3
      written &+= 4
    }
    switch input.count - whole {
    case 1:
      let group = UInt32(input[read]) << 16
      out[written] = table[Int(group >> 18)]
      out[written + 1] = table[Int((group >> 12) & 0x3F)]
      out[written + 2] = UInt8(ascii: "=")
      out[written + 3] = UInt8(ascii: "=")
    case 2:
      let group = UInt32(input[read]) << 16 | UInt32(input[read + 1]) << 8
      out[written] = table[Int(group >> 18)]
      out[written + 1] = table[Int((group >> 12) & 0x3F)]
      out[written + 2] = table[Int((group >> 6) & 0x3F)]
      out[written + 3] = UInt8(ascii: "=")
    default:
      break
    }
  }
}

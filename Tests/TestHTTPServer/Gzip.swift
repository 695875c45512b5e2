/// A gzip member (RFC 1952) whose deflate stream (RFC 1951) is made only of stored blocks, so it
/// can be written as the input streams by, with a length known beforehand.
enum StoredGzip {
  static let maximumBlock = 65_535

  static let header: [UInt8] = [
    0x1F, 0x8B,  // magic
    0x08,  // deflate
    0x00,  // no flags: no name, comment or header CRC
    0x00, 0x00, 0x00, 0x00,  // no modification time
    0x00,  // no extra flags
    0xFF,  // unknown operating system
  ]

  static func blockCount(forInput count: Int) -> Int {
    max(1, (count + maximumBlock - 1) / maximumBlock)
  }

  static func encodedLength(forInput count: Int) -> Int {
    header.count + 5 * blockCount(forInput: count) + count + 8
  }

  /// BFINAL and BTYPE 00 in the first byte; the rest of that byte is padding, then LEN and NLEN.
  static func blockHeader(length: Int, final: Bool) -> [UInt8] {
    let length = UInt16(length)
    let complement = ~length
    return [
      final ? 0x01 : 0x00, UInt8(length & 0xFF), UInt8(length >> 8), UInt8(complement & 0xFF),
      UInt8(complement >> 8),
    ]
  }

  static func trailer(crc: UInt32, inputCount: Int) -> [UInt8] {
    let size = UInt32(truncatingIfNeeded: inputCount)
    return [crc, size].flatMap { value in (0..<4).map { UInt8((value >> (8 * $0)) & 0xFF) } }
  }
}

/// CRC-32 as gzip uses it (reflected polynomial 0xEDB88320), fed in pieces.
struct CRC32 {
  private static let table: [UInt32] = (0..<256).map { index in
    var value = UInt32(index)
    for _ in 0..<8 { value = value & 1 == 1 ? (value >> 1) ^ 0xEDB8_8320 : value >> 1 }
    return value
  }

  private var state: UInt32 = 0xFFFF_FFFF

  var value: UInt32 { ~state }

  mutating func update(_ bytes: UnsafeRawBufferPointer) {
    var crc = state
    for byte in bytes {
      crc = Self.table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8)
    }
    state = crc
  }
}

/// A gzip reader for members whose deflate stream has only stored blocks: enough to check the
/// server's gzip fault without zlib, written apart from the server's encoder.
enum StoredInflate {
  struct Member: Equatable {
    var content: [UInt8]
    var blockLengths: [Int]
    var crc: UInt32
    var size: UInt32
  }

  static func decode(_ bytes: [UInt8]) throws -> Member {
    guard bytes.count >= 18, bytes[0] == 0x1F, bytes[1] == 0x8B, bytes[2] == 8 else {
      throw ClientError(description: "not a gzip member")
    }
    guard bytes[3] == 0 else { throw ClientError(description: "header flags \(bytes[3])") }
    var bitPosition = 10 * 8
    func bits(_ count: Int) throws -> Int {
      var value = 0
      for shift in 0..<count {
        let byte = bitPosition / 8
        guard byte < bytes.count else { throw ClientError(description: "truncated") }
        value |= Int((bytes[byte] >> (bitPosition % 8)) & 1) << shift
        bitPosition += 1
      }
      return value
    }
    var content: [UInt8] = []
    var blockLengths: [Int] = []
    var final = false
    while !final {
      final = try bits(1) == 1
      guard try bits(2) == 0 else { throw ClientError(description: "not a stored block") }
      bitPosition = (bitPosition + 7) / 8 * 8
      let length = try bits(16)
      let complement = try bits(16)
      guard length == ~complement & 0xFFFF else { throw ClientError(description: "NLEN") }
      let start = bitPosition / 8
      guard start + length <= bytes.count else { throw ClientError(description: "truncated") }
      content += bytes[start..<(start + length)]
      blockLengths.append(length)
      bitPosition += length * 8
    }
    let trailer = bitPosition / 8
    guard trailer + 8 == bytes.count else {
      throw ClientError(description: "\(bytes.count - trailer) bytes after the deflate stream")
    }
    func word(_ at: Int) -> UInt32 {
      (0..<4).reduce(0) { $0 | UInt32(bytes[at + $1]) << (8 * $1) }
    }
    return Member(
      content: content, blockLengths: blockLengths, crc: word(trailer), size: word(trailer + 4))
  }

  /// CRC-32 bit by bit (RFC 1952 §8), independent of the server's table-driven one.
  static func crc32(_ bytes: [UInt8]) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes {
      crc ^= UInt32(byte)
      for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
    }
    return ~crc
  }
}

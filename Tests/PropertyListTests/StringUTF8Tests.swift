import Foundation
@_spi(Writing) import PropertyList
import Testing

@Suite("Strings' UTF-8 read in place")
struct StringUTF8Tests {
  @Test(
    "withUTF8InPlace gives every string's UTF-8 bytes, small or large, native or made from parts",
    arguments: [
      "", "a", "fifteen bytes!!", "sixteen bytes!!!", "NSURLSessionResumeInfoTempFileName",
      "é", "日本語のテキスト", "😀 and text", String(repeating: "x", count: 1_000),
      String("prefix-middle-suffix".dropFirst(7).dropLast(7)),
      String(decoding: [0x61, 0xC3, 0xA9, 0x62], as: UTF8.self),
      NSString(string: "through NSString").description,
    ])
  func bytes(_ text: String) {
    #expect(text.withUTF8InPlace { Array($0) } == Array(text.utf8))
  }
}

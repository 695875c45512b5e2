import KeyedArchive
import Testing

@Suite("HTTP field names")
struct HTTPFieldNameTests {
  @Test(
    "Names match without regard to ASCII case, and only to ASCII case",
    arguments: [
      ("ETag", "etag", true),
      ("Last-Modified", "LAST-MODIFIED", true),
      ("If-Range", "if-range", true),
      ("X-1", "x-1", true),
      ("", "", true),
      ("ETag", "ETags", false),
      ("ETag", "ETaf", false),
      // Bit 0x20 apart but not letters: '@' and '`', '[' and '{', '-' and '\r'.
      ("A@", "a`", false),
      ("[", "{", false),
      ("-", "\r", false),
      // Unicode's case folding takes long s to s and the Kelvin sign to k; HTTP does not.
      ("ſ", "s", false),
      ("\u{212A}", "k", false),
      ("é", "É", false),
      ("é", "é", true),
    ])
  func equal(_ lhs: String, _ rhs: String, _ expected: Bool) {
    #expect(HTTPFieldName.equal(lhs, rhs) == expected)
    #expect(HTTPFieldName.equal(rhs, lhs) == expected)
  }
}

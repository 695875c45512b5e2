/// HTTP field names, which compare without regard to ASCII case (RFC 9110 §5.1).
package enum HTTPFieldName {
  /// Whether two field names are one name: their UTF-8 bytes equal but for the case of ASCII
  /// letters. Names are tokens, all ASCII; anything else must match exactly, rather than by
  /// Unicode's case folding (under which `ſ` would match `s`). Foundation's
  /// `caseInsensitiveCompare` folds all of Unicode, at thousands of instructions a call.
  package static func equal(_ lhs: String, _ rhs: String) -> Bool {
    guard lhs.utf8.count == rhs.utf8.count else { return false }
    for (left, right) in zip(lhs.utf8, rhs.utf8) where left != right {
      // Two letters that differ only in bit 0x20: the same letter in two cases.
      let lower = left | 0x20
      guard left ^ right == 0x20, lower >= UInt8(ascii: "a"), lower <= UInt8(ascii: "z") else {
        return false
      }
    }
    return true
  }
}

/// What a Range header asks for, after RFC 9110's rules on what a server may ignore.
enum RangeRequest: Equatable {
  /// No Range, or one this server ignores (another unit, invalid syntax).
  case none
  /// More than one range; this server answers those with the whole representation.
  case multiple
  case single(RangeSpec)

  init(header: String?) {
    guard let header, let equals = header.firstIndex(of: "=") else {
      self = .none
      return
    }
    guard header[..<equals].trimmingHTTPWhitespace().lowercased() == "bytes" else {
      self = .none
      return
    }
    // Empty list elements are allowed by the list syntax and count for nothing.
    let specs = header[header.index(after: equals)...].split(separator: ",").map {
      $0.trimmingHTTPWhitespace()
    }.filter { !$0.isEmpty }
    if specs.count > 1 {
      self = .multiple
    } else if let only = specs.first, let spec = RangeSpec(only) {
      self = .single(spec)
    } else {
      self = .none
    }
  }
}

enum RangeSpec: Equatable {
  case from(Int)
  case fromThrough(Int, Int)
  case suffix(Int)

  init?(_ text: String) {
    guard let dash = text.firstIndex(of: "-") else { return nil }
    let first = text[..<dash]
    let last = text[text.index(after: dash)...]
    func number(_ digits: Substring) -> Int? {
      guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
      // A position past Int.max is past any end this server holds.
      return Int(digits) ?? Int.max
    }
    if first.isEmpty {
      guard let count = number(last) else { return nil }
      self = .suffix(count)
    } else if last.isEmpty {
      guard let start = number(first) else { return nil }
      self = .from(start)
    } else {
      guard let start = number(first), let end = number(last), end >= start else { return nil }
      self = .fromThrough(start, end)
    }
  }

  /// The byte positions served from a representation of `total` bytes; nil when unsatisfiable.
  func resolve(total: Int) -> ClosedRange<Int>? {
    switch self {
    case .from(let start):
      return start < total ? start...(total - 1) : nil
    case .fromThrough(let start, let end):
      return start < total ? start...min(end, total - 1) : nil
    case .suffix(let count):
      return count > 0 && total > 0 ? max(0, total - count)...(total - 1) : nil
    }
  }
}

enum Validators {
  /// RFC 9110 §13.1.5: an entity tag matches only strongly and only a strong tag; a date matches
  /// only a Last-Modified that is the same instant.
  static func ifRangeMatches(_ value: String, etag: String?, lastModified: String?) -> Bool {
    if value.hasPrefix("W/") { return false }
    if value.hasPrefix("\"") {
      guard let etag, !etag.hasPrefix("W/") else { return false }
      return value == etag
    }
    guard let lastModified else { return false }
    if value == lastModified { return true }
    guard let asked = HTTPDate.parse(value), let modified = HTTPDate.parse(lastModified) else {
      return false
    }
    return asked == modified
  }

  /// The weak tag of the gzip representation, derived from the resource's own tag.
  static func gzipETag(from etag: String?) -> String {
    guard var opaque = etag else { return "W/\"gzip\"" }
    if opaque.hasPrefix("W/") { opaque.removeFirst(2) }
    if opaque.hasPrefix("\"") && opaque.hasSuffix("\"") && opaque.count >= 2 {
      opaque = String(opaque.dropFirst().dropLast())
    }
    return "W/\"\(opaque)-gzip\""
  }
}

import Foundation

/// The byte-range arithmetic of resuming (format reference §6), and the parsing of the server's
/// answer, kept free of any I/O so that every case is tested directly.
public enum HTTPRange {
  /// The `Range` header to send when `received` bytes are on disk and the request carried its own
  /// `Range` (nil: none), as CFNetwork computes it: none → `bytes=R-`; `bytes=S-` → `bytes=(S+R)-`;
  /// `bytes=S-E` → `bytes=(S+R)-E`; `bytes=-N` → `bytes=-(N−R)`.
  ///
  /// - Returns: the header value, `.complete` when the requested range is already on disk, or
  ///   `.restart` when the request's own range is not one of those forms (CFNetwork then starts
  ///   over) or the numbers do not fit.
  public static func resumeHeader(received: Int64, requestRange: String?) -> ResumeRange {
    guard received > 0 else {
      return requestRange.map { .header($0) } ?? .none
    }
    guard let requestRange else { return .header("bytes=\(received)-") }
    guard let spec = parseSingle(requestRange) else { return .restart }
    switch spec {
    case .from(let start):
      let (sum, overflow) = start.addingReportingOverflow(received)
      return overflow ? .restart : .header("bytes=\(sum)-")
    case .span(let start, let end):
      let (sum, overflow) = start.addingReportingOverflow(received)
      if overflow { return .restart }
      return sum > end ? .complete : .header("bytes=\(sum)-\(end)")
    case .suffix(let length):
      return received >= length ? .complete : .header("bytes=-\(length - received)")
    }
  }

  /// What to ask for when resuming.
  public enum ResumeRange: Sendable, Hashable {
    /// No Range header: the whole resource.
    case none
    /// This Range header value.
    case header(String)
    /// Everything asked for is on disk.
    case complete
    /// The request's own range cannot be continued: start over.
    case restart
  }

  /// One byte-range spec.
  public enum Spec: Sendable, Hashable {
    /// `bytes=S-`.
    case from(Int64)
    /// `bytes=S-E` (inclusive).
    case span(Int64, Int64)
    /// `bytes=-N`: the last N bytes.
    case suffix(Int64)
  }

  /// Parses a `Range` value holding exactly one spec; nil for anything else (several ranges,
  /// another unit, malformed numbers).
  public static func parseSingle(_ value: String) -> Spec? {
    let trimmed = value.trimmingCharacters(in: .whitespaces)
    guard trimmed.lowercased().hasPrefix("bytes=") else { return nil }
    let spec = trimmed.dropFirst(6).trimmingCharacters(in: .whitespaces)
    guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return nil }
    let first = spec[..<dash].trimmingCharacters(in: .whitespaces)
    let second = spec[spec.index(after: dash)...].trimmingCharacters(in: .whitespaces)
    if first.isEmpty {
      guard let length = digits(second), length > 0 else { return nil }
      return .suffix(length)
    }
    guard let start = digits(first) else { return nil }
    if second.isEmpty { return .from(start) }
    guard let end = digits(second), end >= start else { return nil }
    return .span(start, end)
  }

  /// A `Content-Range` header: `bytes S-E/T` (T may be `*`) or `bytes */T`.
  public struct ContentRange: Sendable, Hashable {
    /// The first and last byte sent, or nil for the unsatisfied form `bytes */T`.
    public var range: ClosedRange<Int64>?
    /// The complete length, when the server knows it.
    public var total: Int64?
  }

  /// Parses a `Content-Range` value; nil when it is malformed or inconsistent (end before start,
  /// end at or past the total).
  public static func parseContentRange(_ value: String) -> ContentRange? {
    let trimmed = value.trimmingCharacters(in: .whitespaces)
    guard trimmed.lowercased().hasPrefix("bytes ") else { return nil }
    let rest = trimmed.dropFirst(6).trimmingCharacters(in: .whitespaces)
    guard let slash = rest.firstIndex(of: "/") else { return nil }
    let rangePart = rest[..<slash].trimmingCharacters(in: .whitespaces)
    let totalPart = rest[rest.index(after: slash)...].trimmingCharacters(in: .whitespaces)
    var total: Int64?
    if totalPart != "*" {
      guard let parsed = digits(totalPart) else { return nil }
      total = parsed
    }
    if rangePart == "*" {
      guard total != nil else { return nil }
      return ContentRange(range: nil, total: total)
    }
    guard let dash = rangePart.firstIndex(of: "-"),
      let start = digits(String(rangePart[..<dash])),
      let end = digits(String(rangePart[rangePart.index(after: dash)...])), end >= start
    else { return nil }
    if let total, end >= total { return nil }
    return ContentRange(range: start...end, total: total)
  }

  /// A non-negative decimal that fits in Int64, with nothing else around it.
  static func digits(_ text: String) -> Int64? {
    guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
    return Int64(text)
  }
}

import Foundation

/// A URL that carries an expiring signature in its query: a presigned S3 or Google Cloud Storage
/// URL, a CloudFront signed URL, an Azure SAS. Such a URL is good until it expires; one that ends
/// up in resume data (the current request after a redirect) makes every resume after that fail.
public struct SignedURL: Sendable, Hashable {
  /// Which signing scheme the query follows.
  public enum Scheme: String, Sendable, Hashable {
    /// AWS Signature Version 4 (`X-Amz-Date`, `X-Amz-Expires`, `X-Amz-Signature`).
    case awsSigV4 = "aws-sigv4"
    /// Google Cloud Storage V4 signing (`X-Goog-Date`, `X-Goog-Expires`, `X-Goog-Signature`).
    case googleV4 = "google-v4"
    /// An `Expires` epoch beside a `Signature` (CloudFront, S3's and Google's older signing).
    case expiresSignature = "expires-signature"
    /// An Azure shared access signature (`se`, `sig`).
    case azureSAS = "azure-sas"
  }

  /// The scheme.
  public var scheme: Scheme
  /// When it expires, when the query says.
  public var expires: Date?

  /// The signature in `url`'s query, nil when it carries none of the known ones. Parameter names
  /// are matched without regard to case.
  public init?(_ url: URL) {
    guard let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems,
      !items.isEmpty
    else { return nil }
    func value(_ name: String) -> String? {
      items.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
    if let seconds = value("X-Amz-Expires") {
      scheme = .awsSigV4
      expires = Self.expiry(start: value("X-Amz-Date"), seconds: seconds)
    } else if let seconds = value("X-Goog-Expires") {
      scheme = .googleV4
      expires = Self.expiry(start: value("X-Goog-Date"), seconds: seconds)
    } else if let epoch = value("Expires"),
      value("Signature") != nil || value("Key-Pair-Id") != nil || value("GoogleAccessId") != nil
        || value("AWSAccessKeyId") != nil
    {
      scheme = .expiresSignature
      // Seconds since 1970, up to the end of year 9999.
      expires = Int64(epoch).flatMap {
        (0...253_402_300_799).contains($0) ? Date(timeIntervalSince1970: TimeInterval($0)) : nil
      }
    } else if let end = value("se"), value("sig") != nil {
      scheme = .azureSAS
      expires = Self.isoDate(end)
    } else {
      return nil
    }
  }

  /// A compact ISO 8601 start (`20261207T120000Z`) plus a number of seconds.
  private static func expiry(start: String?, seconds: String) -> Date? {
    guard let start, let seconds = Int64(seconds), seconds >= 0, seconds < 1 << 40,
      let date = compactDate(start)
    else { return nil }
    return date.addingTimeInterval(TimeInterval(seconds))
  }

  /// `20261207T120000Z`.
  private static func compactDate(_ text: String) -> Date? {
    let bytes = Array(text.utf8)
    guard bytes.count == 16, bytes[8] == UInt8(ascii: "T"), bytes[15] == UInt8(ascii: "Z")
    else { return nil }
    func number(_ range: Range<Int>) -> Int? {
      var value = 0
      for byte in bytes[range] {
        guard byte >= 0x30, byte <= 0x39 else { return nil }
        value = value * 10 + Int(byte - 0x30)
      }
      return value
    }
    guard let year = number(0..<4), let month = number(4..<6), let day = number(6..<8),
      let hour = number(9..<11), let minute = number(11..<13), let second = number(13..<15)
    else { return nil }
    return utcDate(year, month, day, hour, minute, second)
  }

  /// An Azure `se` value: `2026-12-07`, `2026-12-07T12:00Z` or `2026-12-07T12:00:00Z`.
  private static func isoDate(_ text: String) -> Date? {
    let parts = text.split(separator: "T", maxSplits: 1).map(String.init)
    guard let first = parts.first else { return nil }
    let day = first.split(separator: "-").compactMap { Int($0) }
    guard day.count == 3 else { return nil }
    var time = [0, 0, 0]
    if parts.count == 2 {
      guard parts[1].hasSuffix("Z") else { return nil }
      let fields = parts[1].dropLast().split(separator: ":").map { Int($0) }
      guard (2...3).contains(fields.count), fields.allSatisfy({ $0 != nil }) else { return nil }
      for (index, field) in fields.enumerated() { time[index] = field! }
    }
    return utcDate(day[0], day[1], day[2], time[0], time[1], time[2])
  }

  private static func utcDate(
    _ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int, _ second: Int
  ) -> Date? {
    guard (1970...9999).contains(year), (1...12).contains(month), (1...31).contains(day),
      (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
    else { return nil }
    // Days from the civil date (proleptic Gregorian), so no calendar or time zone is needed.
    let shifted = month <= 2 ? year - 1 : year
    let era = shifted / 400
    let yearOfEra = shifted - era * 400
    let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    let days = era * 146_097 + dayOfEra - 719_468
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second
    return Date(timeIntervalSince1970: TimeInterval(seconds))
  }

  /// `2026-12-07T12:00:00Z` (the instant clamped to years 1970 to 9999).
  public static func text(_ date: Date) -> String {
    let interval = date.timeIntervalSince1970
    let seconds =
      interval.isFinite ? Int64(min(max(interval, 0), 253_402_300_799).rounded(.down)) : 0
    var days = seconds / 86_400
    var rest = seconds % 86_400
    if rest < 0 {
      rest += 86_400
      days -= 1
    }
    // Civil date from days (the inverse of the above).
    let shifted = days + 719_468
    let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
    let dayOfEra = shifted - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthIndex = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
    let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
    let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
    return
      "\(year)-\(two(month))-\(two(day))T\(two(rest / 3600)):\(two(rest % 3600 / 60)):\(two(rest % 60))Z"
  }
}

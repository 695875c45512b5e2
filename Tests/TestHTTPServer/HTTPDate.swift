import Foundation
import Glibc

/// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the only HTTP-date form a sender may generate.
enum HTTPDate {
  private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
  private static let months = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
  ]

  static func format(_ date: Date) -> String {
    var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
    var parts = tm()
    gmtime_r(&seconds, &parts)
    func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
    return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) "
      + "\(parts.tm_year + 1900) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
  }

  /// Seconds since 1970 of an IMF-fixdate; nil for anything else.
  static func parse(_ text: String) -> Int? {
    let fields = text.split(separator: " ", omittingEmptySubsequences: false)
    guard fields.count == 6, fields[0].count == 4, fields[0].hasSuffix(","),
      days.contains(String(fields[0].dropLast())), fields[5] == "GMT",
      fields[1].count == 2, let day = Int32(fields[1]),
      let month = months.firstIndex(of: String(fields[2])),
      fields[3].count == 4, let year = Int32(fields[3])
    else { return nil }
    let clock = fields[4].split(separator: ":", omittingEmptySubsequences: false)
    guard fields[4].count == 8, clock.count == 3, let hour = Int32(clock[0]),
      let minute = Int32(clock[1]), let second = Int32(clock[2]),
      (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute),
      (0...60).contains(second)
    else { return nil }
    var parts = tm()
    parts.tm_year = year - 1900
    parts.tm_mon = Int32(month)
    parts.tm_mday = day
    parts.tm_hour = hour
    parts.tm_min = minute
    parts.tm_sec = second
    return Int(timegm(&parts))
  }
}

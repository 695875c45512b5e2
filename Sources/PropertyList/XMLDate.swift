/// Conversion between CoreFoundation absolute time (seconds since 2001-01-01T00:00:00Z) and the
/// `YYYY-MM-DDTHH:MM:SSZ` text of XML `<date>` elements, on the proleptic Gregorian calendar, with
/// no Foundation calendar in the loop (it is slow and allocates).
enum XMLDate {
  /// Days from 1970-01-01 to 2001-01-01.
  private static let referenceDay: Int64 = 11_323
  /// Absolute times of 0001-01-01T00:00:00Z and 10000-01-01T00:00:00Z: the range XML dates can hold.
  static let earliest: Double = -63_113_904_000
  static let endOfYear9999: Double = 252_423_993_600

  /// The absolute time of a civil date and time, or nil when a field is out of range.
  static func absoluteTime(
    year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int
  ) -> Double? {
    guard (1...9999).contains(year), (1...12).contains(month),
      (1...daysIn(month, year)).contains(day),
      (0...23).contains(hour), (0...59).contains(minute), (0...59).contains(second)
    else { return nil }
    let days = daysFromCivil(Int64(year), Int64(month), Int64(day)) - referenceDay
    return Double(days * 86_400 + Int64(hour * 3600 + minute * 60 + second))
  }

  /// The civil date and time of an absolute time, rounded down to the second as CoreFoundation's
  /// XML writer does, or nil when it falls outside years 0001–9999 (or is not finite).
  static func text(_ absolute: Double) -> String? {
    guard absolute.isFinite, absolute >= earliest, absolute < endOfYear9999 else { return nil }
    let whole = Int64(absolute.rounded(.down))
    let (dayNumber, secondOfDay) = floorDivide(whole, 86_400)
    let (year, month, day) = civilFromDays(dayNumber + referenceDay)
    let hour = secondOfDay / 3600
    let minute = secondOfDay % 3600 / 60
    let second = secondOfDay % 60
    return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T" + pad(hour, 2) + ":"
      + pad(minute, 2) + ":" + pad(second, 2) + "Z"
  }

  private static func pad(_ value: Int64, _ width: Int) -> String {
    let digits = String(value)
    return digits.count >= width
      ? digits : String(repeating: "0", count: width - digits.count) + digits
  }

  private static func floorDivide(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
    let quotient = a / b
    let remainder = a % b
    return remainder < 0 ? (quotient - 1, remainder + b) : (quotient, remainder)
  }

  private static func daysIn(_ month: Int, _ year: Int) -> Int {
    switch month {
    case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
    case 4, 6, 9, 11: return 30
    default: return 31
    }
  }

  // Howard Hinnant's days_from_civil / civil_from_days (public-domain algorithms).
  private static func daysFromCivil(_ y0: Int64, _ m: Int64, _ d: Int64) -> Int64 {
    let y = m <= 2 ? y0 - 1 : y0
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }

  private static func civilFromDays(_ z0: Int64) -> (Int64, Int64, Int64) {
    let z = z0 + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let mp = (5 * dayOfYear + 2) / 153
    let d = dayOfYear - (153 * mp + 2) / 5 + 1
    let m = mp < 10 ? mp + 3 : mp - 9
    return (yearOfEra + era * 400 + (m <= 2 ? 1 : 0), m, d)
  }
}

import ResumeData

/// ANSI colour for the few words where it helps a reader (severities, verdicts, `Error:`), or
/// plain text when the stream is not a terminal or `NO_COLOR` is set.
struct TextStyle {
  /// Whether escape sequences are written at all.
  let enabled: Bool

  /// The colours used.
  enum Color: String {
    case red = "31"
    case green = "32"
    case yellow = "33"
    case cyan = "36"
    case boldRed = "1;31"
  }

  /// `text` in `color`, or `text` itself when colour is off.
  func paint(_ text: String, _ color: Color) -> String {
    enabled ? "\u{1B}[\(color.rawValue)m\(text)\u{1B}[0m" : text
  }

  /// The colour of a finding's severity.
  static func color(of severity: Finding.Severity) -> Color {
    switch severity {
    case .error: .red
    case .warning: .yellow
    case .info: .cyan
    }
  }

  /// A finding's one-line description, control characters escaped, its severity coloured.
  func finding(_ finding: Finding) -> String {
    let line = CommandError.oneLine(finding.description)
    let severity = finding.severity.rawValue
    guard enabled, line.hasPrefix(severity) else { return line }
    return paint(severity, Self.color(of: finding.severity)) + line.dropFirst(severity.count)
  }

  /// An error line with its `Error:` prefix in bold red.
  func error(_ rendered: String) -> String {
    guard enabled, rendered.hasPrefix("Error:") else { return rendered }
    return paint("Error:", .boldRed) + rendered.dropFirst("Error:".count)
  }
}

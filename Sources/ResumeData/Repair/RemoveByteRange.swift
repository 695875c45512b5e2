/// iOS 11.0–11.2 — `NSURLSessionResumeByteRange`. Repeated cancel → resume makes those systems add
/// the key, and the next resume then "completes" with a short or zero-length file. The rule
/// removes the key; the range is recomputed from BytesReceived as every other system does.
public struct RemoveByteRange: RepairRule {
  /// Creates the rule.
  public init() {}

  /// `remove-byte-range`.
  public var name: String { "remove-byte-range" }

  /// iOS 11.0–11.2 only: later systems read the key correctly.
  public func isNeeded(for target: RepairTarget) -> Bool { target == .ios11Early }

  /// Removes the key when present.
  public func apply(to blob: inout ResumeData, _ context: RepairContext) throws -> [Finding] {
    guard let range = blob.byteRange else { return [] }
    try blob.setEntry(ResumeDataKey.byteRange, nil)
    return [
      Finding(
        name, .info, "removed NSURLSessionResumeByteRange (\(range))",
        path: ResumeDataKey.byteRange)
    ]
  }
}

/// Every target — the iOS 12.0–12.2 empty blob. Cancelling a download before its first byte made
/// those systems write a tiny blob (about 160 bytes) that records nothing received; resuming it
/// fails or "completes" with an empty file. The rule changes nothing: it refuses the blob, so that
/// the caller starts the download over instead of writing a repaired blob. A blob with neither a
/// URL nor a request is refused the same way: no system can resume it, and what other rules would
/// leave of it might not even read as resume data.
public struct RefuseEmptyBlob: RepairRule {
  /// Creates the rule.
  public init() {}

  /// `refuse-empty-blob`.
  public var name: String { "refuse-empty-blob" }

  /// Every target: no system can resume from nothing.
  public func isNeeded(for target: RepairTarget) -> Bool { true }

  /// An error finding (nothing to produce) for a blob smaller than any real one, with zero bytes
  /// received, or with neither a URL nor a request to resume; nothing otherwise.
  public func apply(to blob: inout ResumeData, _ context: RepairContext) throws -> [Finding] {
    let tiny = blob.isTiny
    guard tiny || blob.bytesReceived == 0 else {
      guard blob.downloadURL == nil, blob.currentRequest == nil, blob.originalRequest == nil else {
        return []
      }
      return [
        Finding(
          name, .error,
          "the blob holds neither a URL nor a request: there is nothing to resume; no repaired blob is written",
          path: ResumeDataKey.downloadURL)
      ]
    }
    let why =
      tiny
      ? "the blob is \(blob.originalCount) bytes, too small to hold a request (the iOS 12.0–12.2 cancel-before-first-byte case)"
      : "the blob records 0 bytes received"
    return [
      Finding(
        name, .error, "\(why): start the download over; no repaired blob is written",
        path: tiny ? "" : ResumeDataKey.bytesReceived)
    ]
  }
}

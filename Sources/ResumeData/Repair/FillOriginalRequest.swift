import PropertyList

/// iOS 10.2–12.x — a blob without an original request. From iOS 10.3 to 12.1 a task created from
/// such a blob has `originalRequest == nil`, which breaks apps that match tasks by their original
/// request (Safari-made blobs never carry one). The rule copies `NSURLSessionResumeCurrentRequest`
/// into `NSURLSessionResumeOriginalRequest`.
public struct FillOriginalRequest: RepairRule {
  /// Creates the rule.
  public init() {}

  /// `fill-original-request`.
  public var name: String { "fill-original-request" }

  /// iOS 10.2–10.3, 11 and 12 (10.3 to 12.1 show the symptom).
  public func isNeeded(for target: RepairTarget) -> Bool {
    [.ios10Late, .ios11Early, .ios11Late, .ios12].contains(target)
  }

  /// Copies the current request when the original is missing.
  public func apply(to blob: inout ResumeData, _ context: RepairContext) throws -> [Finding] {
    guard blob.entries[ResumeDataKey.originalRequest] == nil,
      let current = blob.entries[ResumeDataKey.currentRequest], current.dataValue != nil
    else { return [] }
    try blob.setEntry(ResumeDataKey.originalRequest, current)
    return [
      Finding(
        name, .info, "the original request was missing: filled with a copy of the current request",
        path: ResumeDataKey.originalRequest)
    ]
  }
}

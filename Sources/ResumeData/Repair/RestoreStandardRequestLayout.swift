/// Every target but iOS 10.0–10.1 — request archives in the `$N` layout. A blob once repaired for
/// iOS 10.0–10.1 (or written by a copy of that fix) carries request archives that every other
/// system fails to decode. The rule moves them back to `__nsurlrequest_proto_prop_obj_i` keys under
/// `NSKeyedArchiveRootObjectKey`.
public struct RestoreStandardRequestLayout: RepairRule {
  /// Creates the rule.
  public init() {}

  /// `restore-standard-request-layout`.
  public var name: String { "restore-standard-request-layout" }

  /// Every CFNetwork target but iOS 10.0–10.1, and Linux.
  public func isNeeded(for target: RepairTarget) -> Bool {
    target != .ios10Early && target != .networkFramework
  }

  /// Rewrites each request archive in the `$N` layout.
  public func apply(to blob: inout ResumeData, _ context: RepairContext) throws -> [Finding] {
    try blob.convertRequests(to: .standard, rule: name)
  }
}

import KeyedArchive

/// iOS 10.0–10.1 only — request archives it cannot read back. Those systems wrote request archives
/// with `$top` key `NSKeyedArchiveRootObjectKey` and `__nsurlrequest_proto_prop_obj_i` keys, but
/// read them back only under `root` with `$(i+3)` keys, failing with −3003 ("Invalid resume data
/// for background download"). The rule moves each slot key to its `$` number and
/// `__nsurlrequest_proto_props` to the next one, renames the top key, and removes the old keys
/// (the widely copied fix removes the moved object instead, leaving the old key behind). Every
/// other system reads only the standard layout, so the rule never runs for them.
public struct RewriteRequestsForIOS10: RepairRule {
  /// Creates the rule.
  public init() {}

  /// `rewrite-requests-for-ios10`.
  public var name: String { "rewrite-requests-for-ios10" }

  /// iOS 10.0–10.1 only.
  public func isNeeded(for target: RepairTarget) -> Bool { target == .ios10Early }

  /// Rewrites each request archive in the standard layout.
  public func apply(to blob: inout ResumeData, _ context: RepairContext) throws -> [Finding] {
    try blob.convertRequests(to: .dollarNumbered, rule: name)
  }
}

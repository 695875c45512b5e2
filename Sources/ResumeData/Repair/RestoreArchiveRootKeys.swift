/// Every Apple target — archives whose root is under a `$top` key Apple's decoder for them does
/// not look up (format reference §6). CFNetwork reads a keyed resume dictionary (Safari's and
/// WebKit's too) only under the literal `NSKeyedArchiveRootObjectKey`; the response archive and
/// Network.framework's blob are read with secure coding, under `root`. Third-party code writes
/// dictionaries under `root` (what `archivedDataWithRootObject:` uses), and this toolkit wrote
/// Network.framework blobs and rebuilt responses under the literal before December 2026: an
/// Apple system then finds no dictionary (−3003), no resume info, or no response. The rule
/// moves each root under the key of ``ResumeData/rootKey(of:)``; request archives are
/// ``RestoreStandardRequestLayout``'s.
public struct RestoreArchiveRootKeys: RepairRule {
  /// Creates the rule.
  public init() {}

  /// `restore-archive-root-keys`.
  public var name: String { "restore-archive-root-keys" }

  /// Every target: Linux's downloader reads either key, but a blob repaired for it may yet be
  /// handed to an Apple system, and every rewrite writes a keyed dictionary under the literal.
  public func isNeeded(for target: RepairTarget) -> Bool { true }

  /// Moves each root that is under the wrong key.
  public func apply(to blob: inout ResumeData, _ context: RepairContext) throws -> [Finding] {
    try blob.restoreArchiveRootKeys(rule: name)
  }
}

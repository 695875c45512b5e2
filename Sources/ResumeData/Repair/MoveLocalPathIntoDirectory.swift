import PortableFoundation
import PropertyList

/// Every CFNetwork target and Linux — a `LocalPath` into an old sandbox. v1, Safari-made and
/// WebKit blobs name the partial file by absolute path; after a reinstall, a simulator reset or a
/// move to another machine that path points into a container that no longer exists. The rule
/// rewrites `LocalPath` to the given directory plus the path's last component (only when that
/// component is a safe bare name), so the partial file is looked for where it now is.
public struct MoveLocalPathIntoDirectory: RepairRule {
  /// Creates the rule.
  public init() {}

  /// `move-local-path`.
  public var name: String { "move-local-path" }

  /// Every target whose blob carries `LocalPath` in its resume dictionary.
  public func isNeeded(for target: RepairTarget) -> Bool { target != .networkFramework }

  /// Moves `LocalPath` into `context.temporaryDirectory` when it lies outside; nothing without a
  /// directory.
  public func apply(to blob: inout ResumeData, _ context: RepairContext) throws -> [Finding] {
    guard let directory = context.temporaryDirectory?.standardizedFileURL,
      let path = blob.entries[ResumeDataKey.localPath]?.stringValue
    else { return [] }
    let plainPath = ResumeData.plainPath(path)
    let base = directory.path.hasSuffix("/") ? directory.path : directory.path + "/"
    let current = URL(fileURLWithPath: plainPath).standardizedFileURL
    guard !current.path.hasPrefix(base) else { return [] }
    let name = current.lastPathComponent
    guard ResumeData.isSafeBareName(name), ResumeData.isSafeAbsolutePath(plainPath) else {
      return []
    }
    let moved = directory.appendingPathComponent(name).path
    try blob.setEntry(ResumeDataKey.localPath, .string(moved))
    return [
      Finding(
        self.name, .info,
        "LocalPath moved from \(path) to \(moved)", path: ResumeDataKey.localPath)
    ]
  }
}

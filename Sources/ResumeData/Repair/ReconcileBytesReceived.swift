import Foundation
import PropertyList

/// Every target with a byte count — BytesReceived disagrees with the partial file. A crash or a
/// kill between writing the file and writing the blob leaves the count behind or ahead of the file;
/// resuming then asks for the wrong range and splices or truncates. The rule sets
/// `NSURLSessionResumeBytesReceived` to the partial file's size (its attributes only are read, and
/// only for a safe name inside the given directory).
public struct ReconcileBytesReceived: RepairRule {
  /// Creates the rule.
  public init() {}

  /// `reconcile-bytes-received`.
  public var name: String { "reconcile-bytes-received" }

  /// Every target but Network.framework, whose blobs carry no byte count.
  public func isNeeded(for target: RepairTarget) -> Bool { target != .networkFramework }

  /// Sets the count to the file's size when both are known and differ.
  public func apply(to blob: inout ResumeData, _ context: RepairContext) throws -> [Finding] {
    guard let directory = context.temporaryDirectory?.standardizedFileURL,
      let partial = blob.partialFile(in: directory), let size = ResumeData.fileSize(partial),
      blob.entries[ResumeDataKey.bytesReceived] != nil, blob.bytesReceived != size
    else { return [] }
    let old = blob.bytesReceived.map(String.init) ?? "?"
    try blob.setEntry(ResumeDataKey.bytesReceived, .integer(PropertyListInteger(size)))
    return [
      Finding(
        name, .info,
        "BytesReceived set from \(old) to \(size), the size of \(partial.lastPathComponent)",
        path: ResumeDataKey.bytesReceived)
    ]
  }
}

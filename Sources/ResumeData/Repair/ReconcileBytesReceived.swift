import PortableFoundation
import PropertyList

/// Every target with a byte count — BytesReceived disagrees with the partial file. A crash or a
/// kill between writing the file and writing the blob leaves the count behind or ahead of the file;
/// resuming then asks for the wrong range and splices or truncates. The rule sets
/// `NSURLSessionResumeBytesReceived` to the partial file's size (its attributes only are read, and
/// only for a safe name inside the given directory).
///
/// A segmented download's partial file is allocated to the whole length, so its size says nothing
/// of what it holds: for a blob with a segment map (`ResumeDataKitSegments`) the rule keeps the
/// ranges of the map that fit in the file, and sets BytesReceived to their contiguous prefix.
public struct ReconcileBytesReceived: RepairRule {
  /// Creates the rule.
  public init() {}

  /// `reconcile-bytes-received`.
  public var name: String { "reconcile-bytes-received" }

  /// Every target but Network.framework, whose blobs carry no byte count.
  public func isNeeded(for target: RepairTarget) -> Bool { target != .networkFramework }

  /// Sets the count to the file's size when both are known and differ (for a segmented download,
  /// the map to what fits in the file and the count to its contiguous prefix).
  public func apply(to blob: inout ResumeData, _ context: RepairContext) throws -> [Finding] {
    guard let directory = context.temporaryDirectory?.standardizedFileURL,
      let partial = blob.partialFile(in: directory), let size = ResumeData.fileSize(partial),
      blob.entries[ResumeDataKey.bytesReceived] != nil
    else { return [] }
    if blob.segments != nil {
      return try reconcileSegments(&blob, size: size, file: partial.lastPathComponent)
    }
    guard blob.bytesReceived != size else { return [] }
    let old = blob.bytesReceived.map(String.init) ?? "?"
    try blob.setEntry(ResumeDataKey.bytesReceived, .integer(PropertyListInteger(size)))
    return [
      Finding(
        name, .info,
        "BytesReceived set from \(old) to \(size), the size of \(partial.lastPathComponent)",
        path: ResumeDataKey.bytesReceived)
    ]
  }

  /// The segmented case: a map that does not read is left to the diagnosis
  /// (`segment-map-malformed`).
  private func reconcileSegments(_ blob: inout ResumeData, size: Int64, file: String) throws
    -> [Finding]
  {
    guard let map = try? blob.segmentMap() else { return [] }
    var findings = [Finding]()
    let kept = map.truncated(to: size)
    if kept != map {
      try blob.setEntry(ResumeDataKey.segments, .string(kept.description))
      findings.append(
        Finding(
          name, .info,
          "the segment map keeps what fits in the \(size) bytes of \(file): \(kept.description)",
          path: ResumeDataKey.segments))
    }
    if blob.bytesReceived != kept.contiguousPrefix {
      let old = blob.bytesReceived.map(String.init) ?? "?"
      try blob.setEntry(
        ResumeDataKey.bytesReceived, .integer(PropertyListInteger(kept.contiguousPrefix)))
      findings.append(
        Finding(
          name, .info,
          "BytesReceived set from \(old) to \(kept.contiguousPrefix), the contiguous prefix of the segment map",
          path: ResumeDataKey.bytesReceived))
    }
    return findings
  }
}

import PortableFoundation
import PropertyList

/// Every Apple target — a download over several connections handed to an Apple system. This
/// toolkit's downloader allocates the partial file to the whole length and records the ranges on
/// disk in `ResumeDataKitSegments`; an Apple system knows only `NSURLSessionResumeBytesReceived`
/// (the contiguous prefix), asks for the rest from there and appends it at the file's end, so the
/// file completes with wrong bytes.
///
/// The one repair that writes: truncating the file drops every segment past the prefix, so it is
/// only done when the context allows it (``RepairContext/truncatingPartialFile``) and names the
/// directory that holds the file. The rule then truncates the file to the contiguous prefix of
/// the ranges that fit in it, sets BytesReceived to that prefix and removes the map: the blob is
/// then what the Apple system itself would have written. A file that holds nothing past the
/// prefix (truncated already) needs no leave: only the blob changes. Otherwise the rule changes
/// nothing and returns a warning saying what is left to do. It runs before the conversion to the
/// target's form, which carries no map.
public struct HandOffSegmentedDownload: RepairRule {
  /// Creates the rule.
  public init() {}

  /// `hand-off-segments`.
  public var name: String { "hand-off-segments" }

  /// Every target but Linux, where this toolkit's downloader reads the map.
  public func isNeeded(for target: RepairTarget) -> Bool { target != .linux }

  /// Truncates the partial file to the prefix, when allowed, for a blob whose map says the file
  /// holds segments past it; a warning when not allowed.
  public func apply(to blob: inout ResumeData, _ context: RepairContext) throws -> [Finding] {
    // A map that does not read is left to the diagnosis (`segment-map-malformed`).
    guard let map = try? blob.segmentMap(), !map.isComplete else { return [] }
    let system = context.target.rawValue
    // What is left to do when the file may not be truncated, or cannot be.
    func leftAsItIs(_ prefix: Int64) -> [Finding] {
      [
        Finding(
          name, .warning,
          "left as it is: the partial file is allocated to all \(map.total) bytes and holds segments past byte \(prefix), the prefix \(system) can resume from; truncate the file to \(prefix) bytes first (`repair --temp-dir DIR --truncate-partial-file` does, dropping the segments past it)",
          path: ResumeDataKey.segments)
      ]
    }
    let directory = context.temporaryDirectory?.standardizedFileURL
    guard let directory, let partial = blob.partialFile(in: directory),
      let size = ResumeData.fileSize(partial)
    else {
      guard context.truncatingPartialFile, let directory else {
        return leftAsItIs(map.contiguousPrefix)
      }
      return [
        Finding(
          name, .warning,
          "left as it is: no regular partial file the blob names is in \(directory.path) to truncate",
          path: ResumeDataKey.segments)
      ]
    }
    let file = partial.lastPathComponent
    // A file shorter than the map keeps the ranges that fit, as `reconcile-bytes-received` reads
    // it; never lengthened. One that holds nothing past the prefix (truncated already) needs no
    // leave: only the blob changes.
    let kept = map.truncated(to: size)
    let prefix = kept.contiguousPrefix
    if size > prefix {
      guard context.truncatingPartialFile else { return leftAsItIs(prefix) }
      if let failure = Self.truncate(partial, to: prefix) {
        return [
          Finding(
            name, .error,
            "could not truncate the partial file \(file) to \(prefix) bytes: \(failure)",
            path: ResumeDataKey.segments)
        ]
      }
    }
    var findings = [
      Finding(
        name, .info,
        size > prefix
          ? "the partial file \(file) truncated from \(size) to \(prefix) bytes, the prefix \(system) can resume from (\(kept.bytesOnDisk - prefix) bytes of later segments dropped), and the segment map removed"
          : "the segment map removed: the partial file \(file) holds \(size) bytes, the prefix \(system) can resume from",
        path: ResumeDataKey.segments)
    ]
    try blob.setEntry(ResumeDataKey.segments, nil)
    if blob.bytesReceived != prefix {
      let old = blob.bytesReceived.map(String.init) ?? "?"
      try blob.setEntry(ResumeDataKey.bytesReceived, .integer(PropertyListInteger(prefix)))
      findings.append(
        Finding(
          name, .info, "BytesReceived set from \(old) to \(prefix)",
          path: ResumeDataKey.bytesReceived))
    }
    return findings
  }

  /// Truncates a regular file, not following a symbolic link in its place; nil when done, else
  /// what failed.
  private static func truncate(_ file: URL, to length: Int64) -> String? {
    let descriptor = open(file.path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
    guard descriptor >= 0 else { return String(cString: strerror(errno)) }
    defer { close(descriptor) }
    var status = stat()
    guard fstat(descriptor, &status) == 0 else { return String(cString: strerror(errno)) }
    guard status.st_mode & S_IFMT == S_IFREG else { return "not a regular file" }
    guard ftruncate(descriptor, off_t(length)) == 0 else {
      return String(cString: strerror(errno))
    }
    return nil
  }
}

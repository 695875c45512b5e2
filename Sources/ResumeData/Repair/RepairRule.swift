import PortableFoundation

/// One repair: which OS needs it, what symptom it prevents, what it changes. Each rule lives in its
/// own file with its doc comment, and has a before/after fixture in `Fixtures/repair/`.
public protocol RepairRule: Sendable {
  /// The rule's stable name: the code of the findings it returns.
  var name: String { get }
  /// Whether a blob meant for `target` needs the rule at all.
  func isNeeded(for target: RepairTarget) -> Bool
  /// Applies the rule, returning one finding per change (none when the blob needed nothing). A
  /// finding of severity `.error` means the blob cannot be repaired: nothing is produced.
  func apply(to blob: inout ResumeData, _ context: RepairContext) throws -> [Finding]
}

/// What a repair knows beyond the blob.
public struct RepairContext: Sendable, Hashable {
  /// The system the blob is meant for.
  public var target: RepairTarget
  /// The directory that holds (or should hold) the partial file: enables the rules that look at
  /// its size or move a `LocalPath` into it. Only file attributes are read in it, unless
  /// `truncatingPartialFile` allows the one write a repair makes.
  public var temporaryDirectory: URL?
  /// Whether ``HandOffSegmentedDownload`` may truncate the partial file of a download over several
  /// connections to the prefix an Apple system resumes from, dropping the segments past it.
  /// Default false: the rule then only says what is left to do.
  public var truncatingPartialFile: Bool

  /// Creates a context.
  public init(
    target: RepairTarget, temporaryDirectory: URL? = nil, truncatingPartialFile: Bool = false
  ) {
    self.target = target
    self.temporaryDirectory = temporaryDirectory
    self.truncatingPartialFile = truncatingPartialFile
  }
}

/// The outcome of a repair: the repaired blob, or nil when it must not be resumed (start over),
/// and the findings of every rule.
public struct RepairResult: Sendable, Hashable {
  /// The repaired blob; nil when a rule refused it.
  public var blob: ResumeData?
  /// What each rule changed or refused, in rule order.
  public var findings: [Finding]
}

extension ResumeData {
  /// The rules, in the order they run: refusal first, then the segment map (which the target's
  /// form does not carry), then the form the target reads, then the partial file, then the
  /// request archives.
  public static let repairRules: [any RepairRule] = [
    RefuseEmptyBlob(), HandOffSegmentedDownload(), ConvertForTarget(), RestoreArchiveRootKeys(),
    MoveLocalPathIntoDirectory(), ReconcileBytesReceived(), FillOriginalRequest(),
    RemoveByteRange(), RewriteRequestsForIOS10(), RestoreStandardRequestLayout(),
  ]

  /// Repairs the blob for a target: runs every rule the target needs, in order, and reports what
  /// each changed. An untouched blob (nothing needed) comes back as it was: its
  /// `encoded(keepingUntouchedBytes: true)` is the bytes it was read from.
  ///
  /// - Parameters:
  ///   - target: the system the blob is repaired for.
  ///   - temporaryDirectory: the directory that holds the partial file: `move-local-path` and
  ///     `reconcile-bytes-received` run only with one, and `hand-off-segments` truncates a file
  ///     only in it.
  ///   - truncatingPartialFile: see ``RepairContext/truncatingPartialFile``.
  ///   - rules: the rules to run, in order; ``repairRules`` unless a caller leaves some out.
  /// - Returns: the repaired blob (nil when the download must start over) and every rule's
  ///   findings.
  /// - Throws: ``ResumeDataError`` when a rule cannot read what it must change.
  public consuming func repaired(
    for target: RepairTarget, temporaryDirectory: URL? = nil, truncatingPartialFile: Bool = false,
    rules: [any RepairRule] = ResumeData.repairRules
  ) throws -> RepairResult {
    let context = RepairContext(
      target: target, temporaryDirectory: temporaryDirectory,
      truncatingPartialFile: truncatingPartialFile)
    // Consuming: a caller done with the blob hands it over instead of having it copied, which
    // retains every reference it holds.
    var blob = self
    var findings = [Finding]()
    for rule in rules where rule.isNeeded(for: target) {
      let changes = try rule.apply(to: &blob, context)
      // Most rules change nothing: an empty append still costs a call and a uniqueness check.
      guard !changes.isEmpty else { continue }
      findings += changes
      if changes.contains(where: { $0.severity == .error }) {
        return RepairResult(blob: nil, findings: findings)
      }
    }
    return RepairResult(blob: blob, findings: findings)
  }
}

extension Finding {
  /// The error finding for a repair that could not be made (a conversion the blob cannot give the
  /// target what it needs for): the ``ResumeDataError``'s code and key path, else `repair-failed`.
  public init(repairFailure error: any Error, for target: RepairTarget) {
    let failure = error as? ResumeDataError
    self.init(
      failure?.code.rawValue ?? "repair-failed", .error,
      "cannot be repaired for \(target.rawValue): \(failure?.message ?? "\(error)")",
      path: failure?.keyPath ?? "")
  }
}

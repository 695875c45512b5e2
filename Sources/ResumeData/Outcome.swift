import PortableFoundation

/// What a system does with a blob as it is (unrepaired), because of one finding.
///
/// The cases are ordered by precedence: when several findings apply, the greatest decides what
/// happens, since it happens first (a blob that fails never gets to complete short, and one that
/// restarts from zero fetches the whole file again whatever its partial file held).
public enum ResumeOutcome: String, Sendable, Hashable, CaseIterable, Comparable {
  /// The finding changes nothing on that system.
  case unaffected
  /// The download resumes (the finding says what it costs, such as a nil `originalRequest`).
  case resume
  /// The download "completes" with a file shorter than the resource.
  case completeShort = "complete-short"
  /// The download completes with wrong bytes in it (the rest spliced at the wrong offset).
  case completeCorrupt = "complete-corrupt"
  /// The partial file is thrown away and the whole resource is fetched again.
  case restartFromZero = "restart-from-zero"
  /// The system refuses the blob or the task fails with an error.
  case fail

  /// Orders by precedence: unaffected < resume < … < fail.
  public static func < (lhs: ResumeOutcome, rhs: ResumeOutcome) -> Bool {
    allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
  }

  /// The outcome in words, as in "ios11.0-11.2: completes with a short file".
  public var phrase: String {
    switch self {
    case .unaffected: "unaffected"
    case .resume: "resumes"
    case .completeShort: "completes with a short file"
    case .completeCorrupt: "completes with wrong bytes"
    case .restartFromZero: "restarts from zero"
    case .fail: "fails"
    }
  }
}

/// A finding judged for one system: what that system would do with the blob, as it is, because
/// of it.
public struct Judgement: Sendable, Hashable {
  /// The finding.
  public var finding: Finding
  /// What the system does because of it.
  public var outcome: ResumeOutcome

  /// Creates a judgement.
  public init(_ finding: Finding, _ outcome: ResumeOutcome) {
    self.finding = finding
    self.outcome = outcome
  }
}

extension RepairTarget {
  /// The Apple releases in the order they shipped; nil for Network.framework's loader (a loader,
  /// not a release) and Linux.
  var releaseOrder: Int? {
    switch self {
    case .ios10Early: 0
    case .ios10Late: 1
    case .ios11Early: 2
    case .ios11Late: 3
    case .ios12: 4
    case .ios13Later: 5
    case .networkFramework, .linux: nil
    }
  }
}

extension ResumeData {
  /// The oldest system known to write a blob of this form, from its generation, info version and
  /// container (format reference §1): v2 from iOS 9–10 (so the oldest target), v4 from iOS 11,
  /// keyed archives (Safari's too) from iOS 12, info version 5 from iOS 13, Network.framework's
  /// forms from iOS 18. Nil for v1, which third-party code still writes.
  public var oldestWriter: RepairTarget? {
    switch generation {
    case .v1: nil
    case .v2: .ios10Early
    case .v4: .ios11Early
    case .keyed, .safari: (infoVersion ?? 0) >= 5 ? .ios13Later : .ios12
    case .networkFramework, .networkFrameworkWebKit: .ios13Later
    }
  }

  /// The systems a finding concerns, nil when it concerns every system.
  ///
  /// An array, not a set: a set of targets hashes their names at every test, which cost a
  /// diagnosis as much as its other findings together.
  static func systemsConcerned(by code: String) -> [RepairTarget]? {
    switch code {
    case "ios10-request-layout": [.ios10Early]
    case "byte-range-present": [.ios11Early]
    case "original-request-missing": [.ios10Late, .ios11Early, .ios11Late, .ios12]
    // This toolkit reads both layouts; Network.framework reads no dictionary form at all.
    case "ios10-only-request-layout": [.ios10Late, .ios11Early, .ios11Late, .ios12, .ios13Later]
    // This toolkit's downloader reads the map; every other system only knows BytesReceived.
    case "segmented-partial-file": RepairTarget.allCases.filter { $0 != .linux }
    default: nil
    }
  }

  /// Whether a finding is worth reporting about this blob: it concerns every system, or `target`,
  /// or a system at least as recent as the blob's `oldestWriter`. A finding that only concerns
  /// systems older than the one that wrote the blob would never meet it.
  func isRelevant(_ finding: Finding, for target: RepairTarget?) -> Bool {
    guard let systems = Self.systemsConcerned(by: finding.code) else { return true }
    if let target, systems.contains(target) { return true }
    guard let writer = oldestWriter?.releaseOrder else { return true }
    return systems.contains { ($0.releaseOrder ?? writer) >= writer }
  }

  /// The finding for a target that cannot read the blob's form (or, iOS 12, its info version),
  /// nil when it can.
  func unreadableFormFinding(for target: RepairTarget) -> Finding? {
    let form: String
    if !target.readable.contains(generation) {
      form = "a \(generation.rawValue) blob"
    } else if generation == .keyed, let version = target.keyedInfoVersion,
      version < infoVersion ?? 0
    {
      form = "info version \(infoVersion ?? 0)"
    } else {
      return nil
    }
    return Finding(
      "target-cannot-read", .warning,
      "\(target.rawValue) cannot read \(form) (−3003, invalid resume data): repair converts it")
  }

  /// What `target` does with the blob, as it is, because of `finding` (format reference §5 and
  /// §6, and for Linux what this toolkit's downloader does).
  public func outcome(of finding: Finding, on target: RepairTarget) -> ResumeOutcome {
    if let systems = Self.systemsConcerned(by: finding.code), !systems.contains(target) {
      return .unaffected
    }
    switch finding.code {
    case "empty-blob":
      // Zero bytes received asks for the whole file again; a tiny blob, or one naming nothing to
      // fetch, holds nothing to ask with.
      let fetches = downloadURL != nil || currentRequest != nil || originalRequest != nil
      return !isTiny && fetches ? .restartFromZero : .fail
    case "no-validator":
      // Without If-Range the server cannot vouch for the partial file: the downloader here
      // starts over rather than splice; CFNetwork never wrote such a blob and rejects it.
      return target == .linux ? .restartFromZero : .fail
    case "weak-etag":
      // A weak tag never matches in If-Range, so the server answers 200: CFNetwork truncates the
      // partial file and starts over. The downloader here falls back to Last-Modified.
      return target == .linux && serverDownloadDate != nil ? .resume : .restartFromZero
    case "partial-file-size-mismatch":
      // The downloader here continues from the file's own size; CFNetwork asks from the
      // recorded count and appends at the file's end, so the rest lands at the wrong offset.
      return target == .linux ? .resume : .completeCorrupt
    case "partial-file-missing":
      // The downloader here creates an empty partial file; CFNetwork fails the task.
      return target == .linux ? .restartFromZero : .fail
    case "segmented-partial-file":
      // It asks for the rest from the contiguous prefix and appends it at the end of a file
      // allocated to the whole length.
      return .completeCorrupt
    case "segment-map-malformed":
      // Apple's systems ignore the key; the downloader here refuses the blob.
      return target == .linux ? .fail : .unaffected
    case "byte-range-present": return .completeShort
    case "original-request-missing": return .resume
    case "ios10-request-layout", "ios10-only-request-layout", "target-cannot-read": return .fail
    case "unknown-keys": return .unaffected
    default:
      switch finding.severity {
      case .error: return .fail
      case .warning: return .resume
      case .info: return .unaffected
      }
    }
  }

  /// The blob's findings judged for `target`: `findings(temporaryDirectory:for:)` with what that
  /// system would do with the blob, as it is, because of each.
  public func judgements(for target: RepairTarget, temporaryDirectory: URL? = nil) -> [Judgement] {
    findings(temporaryDirectory: temporaryDirectory, for: target).map {
      Judgement($0, outcome(of: $0, on: target))
    }
  }

  /// What a system does with a blob, as it is, given its judgements: the outcome that takes
  /// precedence, `.resume` when none changes anything.
  public static func outcome(of judgements: [Judgement]) -> ResumeOutcome {
    max(judgements.map(\.outcome).max() ?? .resume, .resume)
  }
}

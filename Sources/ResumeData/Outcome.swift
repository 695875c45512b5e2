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
  /// No evidence says what the system does: it may resume, or fail. Ranked above `resume`, so
  /// that a blob is never called resumable on a guess, and below every known failure.
  case notKnown = "not-known"
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
    case .notKnown: "does what is not known"
    case .completeShort: "completes with a short file"
    case .completeCorrupt: "completes with wrong bytes"
    case .restartFromZero: "restarts from zero"
    case .fail: "fails"
    }
  }
}

/// The kind of URLSession a blob is handed to, where what a system does with it differs.
public enum URLSessionKind: String, Sendable, Hashable, CaseIterable {
  /// A default or ephemeral session, run by the app's own process.
  case foreground
  /// A background session, run by `nsurlsessiond`, which checks the blob more strictly.
  case background
}

/// What a system does in a foreground and in a background session, where the two differ.
public struct SessionOutcomes: Sendable, Hashable {
  /// In a default or ephemeral session.
  public var foreground: ResumeOutcome
  /// In a background session.
  public var background: ResumeOutcome

  /// Creates the pair.
  public init(foreground: ResumeOutcome, background: ResumeOutcome) {
    self.foreground = foreground
    self.background = background
  }

  /// The outcome in `session`.
  public subscript(session: URLSessionKind) -> ResumeOutcome {
    session == .foreground ? foreground : background
  }

  /// "fails in a background session, resumes in a foreground one".
  public var phrase: String {
    "\(background.phrase) in a background session, \(foreground.phrase) in a foreground one"
  }
}

/// A finding judged for one system: what that system would do with the blob, as it is, because
/// of it.
public struct Judgement: Sendable, Hashable {
  /// The finding.
  public var finding: Finding
  /// What the system does because of it: where the kinds of session differ (`sessions`), the
  /// worse of the two.
  public var outcome: ResumeOutcome
  /// What it does in each kind of session, when the two differ; nil when they do not.
  public var sessions: SessionOutcomes?

  /// Creates a judgement that holds in every kind of session.
  public init(_ finding: Finding, _ outcome: ResumeOutcome) {
    self.finding = finding
    self.outcome = outcome
  }

  /// Creates a judgement from what happens in each kind of session.
  public init(_ finding: Finding, _ sessions: SessionOutcomes) {
    self.finding = finding
    outcome = max(sessions.foreground, sessions.background)
    self.sessions = sessions.foreground == sessions.background ? nil : sessions
  }

  /// What happens in `session`.
  public func outcome(in session: URLSessionKind) -> ResumeOutcome {
    sessions?[session] ?? outcome
  }

  /// The outcome in words, by kind of session where they differ.
  public var phrase: String { sessions?.phrase ?? outcome.phrase }
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
    // CFNetwork's decoders; this toolkit reads either key, Network.framework its own objects.
    case "request-root-key", "response-root-key":
      RepairTarget.allCases.filter(\.isCFNetwork)
    case "archive-root-key": RepairTarget.allCases.filter { $0 != .linux }
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

  /// What `target` does with the blob, as it is, because of `finding`: where the kinds of session
  /// differ, the worse of the two (`sessionOutcomes(of:on:)`).
  public func outcome(of finding: Finding, on target: RepairTarget) -> ResumeOutcome {
    let sessions = sessionOutcomes(of: finding, on: target)
    return max(sessions.foreground, sessions.background)
  }

  /// What `target` does with the blob, as it is, because of `finding`, in each kind of session
  /// (format reference §5 and §6, and for Linux what this toolkit's downloader does).
  ///
  /// A request archive CFNetwork cannot decode (one in the `$N` layout, or in the standard layout
  /// under `root`) is where they differ: on iOS 18 a foreground session resumes from a GET of
  /// `NSURLSessionDownloadURL` (losing the stored method and header fields) and a background one
  /// fails with −3003; taken for every release from iOS 13, whose CFNetwork the evidence comes
  /// from, and `notKnown` for iOS 10.2–12, which no evidence covers.
  public func sessionOutcomes(of finding: Finding, on target: RepairTarget) -> SessionOutcomes {
    let same = { SessionOutcomes(foreground: $0, background: $0) }
    if let systems = Self.systemsConcerned(by: finding.code), !systems.contains(target) {
      return same(.unaffected)
    }
    switch finding.code {
    case "ios10-only-request-layout", "request-root-key":
      switch target {
      case .ios13Later:
        // The fallback needs a URL to fetch.
        let fallback: ResumeOutcome = downloadURL != nil ? .resume : .fail
        return SessionOutcomes(foreground: fallback, background: .fail)
      // iOS 10.0–10.1 reads the `$N` layout (only under root), never the standard one.
      case .ios10Early: return same(.fail)
      default: return same(.notKnown)
      }
    case "response-root-key":
      // CFNetwork's consumer (format reference §6) takes its validators from the dictionary,
      // not from the response: the resume goes on without it.
      return same(target == .ios13Later ? .resume : .notKnown)
    default:
      return same(simpleOutcome(of: finding, on: target))
    }
  }

  /// `sessionOutcomes(of:on:)` for the findings whose outcome does not depend on the session.
  private func simpleOutcome(of finding: Finding, on target: RepairTarget) -> ResumeOutcome {
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
    case "ios10-request-layout", "target-cannot-read", "archive-root-key": return .fail
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
      Judgement($0, sessionOutcomes(of: $0, on: target))
    }
  }

  /// What a system does with a blob, as it is, given its judgements: the outcome that takes
  /// precedence, `.resume` when none changes anything; where the kinds of session differ, the
  /// worse of the two.
  public static func outcome(of judgements: [Judgement]) -> ResumeOutcome {
    max(judgements.map(\.outcome).max() ?? .resume, .resume)
  }

  /// `outcome(of:)` in each kind of session: nil when the two agree.
  public static func sessionOutcomes(of judgements: [Judgement]) -> SessionOutcomes? {
    func worst(_ session: URLSessionKind) -> ResumeOutcome {
      max(judgements.map { $0.outcome(in: session) }.max() ?? .resume, .resume)
    }
    let sessions = SessionOutcomes(foreground: worst(.foreground), background: worst(.background))
    return sessions.foreground == sessions.background ? nil : sessions
  }
}

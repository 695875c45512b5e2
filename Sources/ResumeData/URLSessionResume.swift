import KeyedArchive
import PortableFoundation

/// An Apple system a blob is about to be handed to: which platform, which release, which loader.
///
/// ``running`` is the one the code runs on; any other can be named, to prepare blobs for a device
/// from a Mac or a server.
public struct AppleSystem: Sendable, Hashable, CustomStringConvertible {
  /// An Apple platform.
  public enum Platform: String, Sendable, Hashable, CaseIterable {
    /// iOS and iPadOS, and Mac Catalyst apps (which CFNetwork serves as macOS's).
    case iOS
    /// macOS.
    case macOS
    /// tvOS.
    case tvOS
    /// watchOS.
    case watchOS
    /// visionOS.
    case visionOS
  }

  /// The platform.
  public var platform: Platform
  /// The release's major number.
  public var major: Int
  /// The release's minor number.
  public var minor: Int
  /// The release's patch number.
  public var patch: Int
  /// Whether the session runs Network.framework's loader (`usesClassicLoadingMode = false`, iOS 18
  /// and macOS 15 and later) rather than CFNetwork's classic one.
  public var networkFrameworkLoader: Bool

  /// A system by platform and release, CFNetwork's classic loader unless told otherwise.
  public init(
    _ platform: Platform, _ major: Int, _ minor: Int = 0, _ patch: Int = 0,
    networkFrameworkLoader: Bool = false
  ) {
    self.platform = platform
    self.major = major
    self.minor = minor
    self.patch = patch
    self.networkFrameworkLoader = networkFrameworkLoader
  }

  /// The system this code runs on, from `ProcessInfo.operatingSystemVersion`; nil off Apple
  /// platforms. Mac Catalyst counts as iOS: every release either reports maps to `ios13+`.
  public static var running: AppleSystem? {
    #if os(iOS) || os(macOS) || os(tvOS) || os(watchOS) || os(visionOS)
      let version = ProcessInfo.processInfo.operatingSystemVersion
      #if os(iOS)
        let platform = Platform.iOS
      #elseif os(macOS)
        let platform = Platform.macOS
      #elseif os(tvOS)
        let platform = Platform.tvOS
      #elseif os(watchOS)
        let platform = Platform.watchOS
      #else
        let platform = Platform.visionOS
      #endif
      return AppleSystem(platform, version.majorVersion, version.minorVersion, version.patchVersion)
    #else
      return nil
    #endif
  }

  /// The repair target whose CFNetwork (or loader) the system runs, nil for releases no source
  /// ties to one: iOS before 10, macOS before 10.12, tvOS before 13 and watchOS before 6 (their
  /// early releases did not ship in step with iOS's point releases, whose bugs the targets follow).
  public var repairTarget: RepairTarget? {
    if networkFrameworkLoader { return .networkFramework }
    switch platform {
    case .iOS:
      switch (major, minor) {
      case (..<10, _): return nil
      case (10, ..<2): return .ios10Early
      case (10, _): return .ios10Late
      case (11, ..<3): return .ios11Early
      case (11, _): return .ios11Late
      case (12, _): return .ios12
      default: return .ios13Later
      }
    case .macOS:
      // macOS 10.12 to 10.15 share CFNetwork with iOS 10 to 13 (RepairTarget.macOSAliases).
      guard major == 10 else { return major > 10 ? .ios13Later : nil }
      switch (minor, patch) {
      case (..<12, _): return nil
      case (12, ..<2): return .ios10Early
      case (12, _): return .ios10Late
      case (13, ..<4): return .ios11Early
      case (13, _): return .ios11Late
      case (14, _): return .ios12
      default: return .ios13Later
      }
    // tvOS 13 and watchOS 6 shipped with iOS 13; visionOS came after it.
    case .tvOS: return major >= 13 ? .ios13Later : nil
    case .watchOS: return major >= 6 ? .ios13Later : nil
    case .visionOS: return .ios13Later
    }
  }

  /// The release as in "iOS 12.1.0", with " (Network.framework loader)" where that applies.
  public var description: String {
    "\(platform.rawValue) \(major).\(minor).\(patch)"
      + (networkFrameworkLoader ? " (Network.framework loader)" : "")
  }
}

/// Where the partial file of a blob is looked for, before it is handed back to URLSession.
public enum PartialFileCheck: Sendable, Hashable {
  /// Look in this directory: a default session's is the app's temporary directory
  /// (`FileManager.default.temporaryDirectory`). A missing file means start over; a size that
  /// disagrees with the blob is repaired.
  case inDirectory(URL)
  /// Do not look: a background session's partial file is kept by `nsurlsessiond`, out of the
  /// app's reach, and the system checks it itself.
  case notChecked

  var directory: URL? {
    switch self {
    case .inDirectory(let directory): directory
    case .notChecked: nil
    }
  }
}

/// What to do with the blob URLSession handed over: pass these bytes to
/// `downloadTask(withResumeData:)`, or start the download over.
public enum URLSessionResume: Sendable, Hashable {
  /// Resume: `data` is the blob to pass (the very bytes given when nothing needed changing), and
  /// `findings` what the repair changed and what is still worth knowing (none for a clean blob).
  case resume(Data, findings: [Finding])
  /// Start over with a fresh `downloadTask(with:)`: `reason` says why (its code and message), and
  /// `findings` holds every finding, the reason among them.
  case startOver(reason: Finding, findings: [Finding])

  /// The blob to pass to `downloadTask(withResumeData:)`, nil when the download must start over.
  public var resumeData: Data? {
    if case .resume(let data, _) = self { data } else { nil }
  }

  /// Every finding, whichever the answer.
  public var findings: [Finding] {
    switch self {
    case .resume(_, let findings), .startOver(_, let findings): findings
    }
  }
}

extension ResumeData {
  /// The one call for a downloader on an Apple platform: reads the blob URLSession handed over,
  /// repairs it for the running system and answers with the blob to resume from, or a clear
  /// "start over".
  ///
  /// It starts over where resuming cannot keep the bytes already fetched: a blob that does not
  /// read, the iOS 12.0–12.2 empty blob, a partial file that is gone, a blob the system would
  /// refuse, truncate or finish short or corrupt even once repaired.
  ///
  /// - Parameters:
  ///   - blob: The `resumeData` from the task's error (`NSURLSessionDownloadTaskResumeData` in
  ///     `userInfo`) or from `cancel(byProducingResumeData:)`.
  ///   - partialFile: Where the partial file is checked; see ``PartialFileCheck``.
  ///   - limits: The limits the blob is read under.
  public static func forURLSession(
    _ blob: Data, partialFile: PartialFileCheck, limits: KeyedArchiveLimits = .default
  ) -> URLSessionResume {
    guard let system = AppleSystem.running else {
      let reason = Finding(
        "unknown-system", .error,
        "not running on an Apple platform: name the system the blob is for (forURLSession(_:on:partialFile:))"
      )
      return .startOver(reason: reason, findings: [reason])
    }
    return forURLSession(blob, on: system, partialFile: partialFile, limits: limits)
  }

  /// ``forURLSession(_:partialFile:limits:)`` for a named system rather than the running one.
  public static func forURLSession(
    _ blob: Data, on system: AppleSystem, partialFile: PartialFileCheck,
    limits: KeyedArchiveLimits = .default
  ) -> URLSessionResume {
    guard let target = system.repairTarget else {
      let reason = Finding(
        "unknown-system", .error,
        "no known resume behaviour for \(system): the oldest releases covered are iOS 10, macOS 10.12, tvOS 13 and watchOS 6"
      )
      return .startOver(reason: reason, findings: [reason])
    }
    let resume: ResumeData
    do {
      resume = try ResumeData(decoding: blob, limits: limits)
    } catch {
      let failure = error as? ResumeDataError
      let reason = Finding(
        failure?.code.rawValue ?? "unreadable", .error,
        "the blob does not read as resume data: \(failure?.description ?? "\(error)")",
        path: failure?.keyPath ?? "")
      return .startOver(reason: reason, findings: [reason])
    }
    let directory = partialFile.directory
    let repair: RepairResult
    do {
      repair = try resume.repaired(for: target, temporaryDirectory: directory)
    } catch {
      let reason = Finding(repairFailure: error, for: target)
      return .startOver(reason: reason, findings: [reason])
    }
    guard let repaired = repair.blob else {
      let reason = repair.findings.first { $0.severity == .error } ?? repair.findings[0]
      return .startOver(reason: reason, findings: repair.findings)
    }
    // What the repair made, judged as the system will meet it: a finding it cannot repair (a
    // missing partial file, a weak validator) decides here rather than after a failed task.
    // Findings that change nothing on this system (an iOS 10.0 layout on iOS 17) are left out.
    let judgements = repaired.judgements(for: target, temporaryDirectory: directory).filter {
      $0.outcome != .unaffected
    }
    let findings = repair.findings + judgements.map(\.finding)
    if let worst = judgements.max(by: { $0.outcome < $1.outcome }), worst.outcome > .resume {
      return .startOver(reason: worst.finding, findings: findings)
    }
    do {
      return .resume(try repaired.encoded(keepingUntouchedBytes: true), findings: findings)
    } catch {
      let reason = Finding(
        "encode-failed", .error, "the repaired blob cannot be written: \(error)")
      return .startOver(reason: reason, findings: findings + [reason])
    }
  }
}

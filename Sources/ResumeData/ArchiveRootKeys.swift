import KeyedArchive
import PortableFoundation

/// The keyed archives a resume blob is or holds, each read on Apple's systems by a decoder of its
/// own, which looks up one `$top` key (``ResumeData/rootKey(of:)``).
public enum ResumeArchiveForm: String, Sendable, Hashable, CaseIterable {
  /// A keyed resume dictionary, as CFNetwork writes it from iOS 12.
  case resumeDictionary = "resume-dictionary"
  /// Safari's own keyed dictionary.
  case safari
  /// WebKit's keyed wrapper around a Network.framework blob (`data` and `LocalPath`).
  case webKitWrapper = "webkit-wrapper"
  /// A request archive (`NSURLSessionResumeCurrentRequest`, `…OriginalRequest`) in the standard
  /// slot layout. (The `$N` layout iOS 10.0–10.1 reads back goes under `root`; that is a layout
  /// of its own, see `URLRequestArchive.Layout`.)
  case requestArchive = "request-archive"
  /// The response archive (`NSURLSessionResumeResponse`).
  case responseArchive = "response-archive"
  /// A Network.framework blob's archive, once unmasked.
  case networkFramework = "network-framework"
}

extension ResumeData {
  /// The `$top` key Apple's decoder for `form` looks up (format reference §6): CFNetwork reads its
  /// resume dictionary, Safari's and WebKit's, and the request archives under the literal string
  /// `NSKeyedArchiveRootObjectKey`; the response archive and Network.framework's blob are read with
  /// `unarchivedObjectOfClass:fromData:`, under `root`. What this toolkit writes follows this
  /// table; what it reads is judged by it (`archive-root-key`, `request-root-key`,
  /// `response-root-key`) and repaired to it.
  ///
  /// WebKit's wrapper: the literal as far as the code read shows; no real blob confirms it.
  public static func rootKey(of form: ResumeArchiveForm) -> ArchiveRootKey {
    switch form {
    case .resumeDictionary, .safari, .webKitWrapper, .requestArchive: .rootObjectKey
    case .responseArchive, .networkFramework: .root
    }
  }

  /// The form of the blob's own archive, nil for a plain dictionary.
  var ownArchiveForm: ResumeArchiveForm? {
    switch generation {
    case .v1, .v2, .v4: nil
    case .keyed: .resumeDictionary
    case .safari: .safari
    case .networkFrameworkWebKit: .webKitWrapper
    case .networkFramework: .networkFramework
    }
  }

  /// The finding for a blob whose own archive names its root under a key Apple's decoder for its
  /// form does not look up; nil when it does (or the blob is a plain dictionary).
  func archiveRootKeyFinding(subject: String = "the blob's archive", path: String = "$top")
    -> Finding?
  {
    if generation == .networkFrameworkWebKit, let nested,
      let finding = nested.archiveRootKeyFinding(
        subject: "the wrapped blob's archive", path: "data")
    {
      return finding
    }
    guard let form = ownArchiveForm else { return nil }
    let wanted = Self.rootKey(of: form)
    guard !ownRootKeys.holds(wanted) else { return nil }
    let reader =
      switch form {
      case .networkFramework:
        "Network.framework's loader reads its resume info (secure coding) only under root and finds none"
      case .webKitWrapper:
        "WebKit reads its wrapper under NSKeyedArchiveRootObjectKey and finds none"
      default:
        "CFNetwork reads a keyed resume dictionary only under NSKeyedArchiveRootObjectKey and finds none (−3003)"
      }
    // A warning, as `target-cannot-read` is: repair makes it right.
    return Finding(
      "archive-root-key", .warning,
      "\(subject) names its root under \(Self.describe(ownRootKeys)), not \(wanted.rawValue): "
        + "\(reader) (repair rewrites the key)",
      path: path)
  }

  /// The root keys `$top` holds, in words.
  static func describe(_ keys: ArchiveRootKeys) -> String {
    keys.holds(.root)
      ? "root" : keys.holds(.rootObjectKey) ? "NSKeyedArchiveRootObjectKey" : "another key"
  }

  /// The finding for a request archive in the standard layout whose root is not under
  /// `NSKeyedArchiveRootObjectKey`, the first such (current request first); nil when there is none.
  func requestRootKeyFinding(current: URLRequestArchive?, original: URLRequestArchive?)
    -> Finding?
  {
    func misplaced(_ request: URLRequestArchive?) -> Bool {
      guard let request, request.layout == .standard else { return false }
      return !request.rootKeys.holds(.rootObjectKey)
    }
    let path =
      misplaced(current)
      ? ResumeDataKey.currentRequest
      : misplaced(original) ? ResumeDataKey.originalRequest : nil
    guard let path else { return nil }
    let which = path == ResumeDataKey.currentRequest ? "current" : "original"
    return Finding(
      "request-root-key", .warning,
      "the \(which) request archive is in the standard layout but names its root under root: "
        + "CFNetwork reads request archives only under NSKeyedArchiveRootObjectKey, so it does not decode "
        + "(\(Self.undecodableRequestConsequence)) (repair rewrites the key)",
      path: path)
  }

  /// The blob's response archive (`NSURLSessionResumeResponse`), decoded, when it decodes and its
  /// root is not under the key Apple reads it by; nil otherwise.
  var misplacedResponseArchive: KeyedArchive? {
    if responseRootKeyIsKnown.value { return nil }
    return entries[ResumeDataKey.response]?.dataValue.flatMap(Self.misplacedResponseArchive)
  }

  /// The response archive `bytes`, decoded, when it decodes and its root is not under the key
  /// Apple reads it by; nil otherwise.
  static func misplacedResponseArchive(_ bytes: Data) -> KeyedArchive? {
    let wanted = rootKey(of: .responseArchive)
    // The usual answer, read from a few objects of the archive; decoded only to confirm a key
    // that looks wrong.
    if let keys = ArchiveRootKeys(peekingBinaryArchive: bytes), keys.holds(wanted) { return nil }
    guard let archive = try? KeyedArchive(decoding: bytes), !archive.hasRootKey(wanted) else {
      return nil
    }
    return archive
  }

  /// The message of `ios10-only-request-layout`, made once: a diagnosis of every blob in that
  /// layout gives it.
  static let dollarLayoutMessage =
    "the request archives are in the $N layout under root, which iOS 9 and earlier wrote and iOS 10.0–10.1 reads back; later systems do not decode them (\(undecodableRequestConsequence)) (repair for them restores the standard layout)"

  /// What CFNetwork does with a blob whose request archives do not decode (format reference §6).
  static let undecodableRequestConsequence =
    "on iOS 18 a foreground session resumes from a GET of NSURLSessionDownloadURL, losing the stored method and header fields, and a background session fails with −3003; what iOS 10.2–17 do is not known"

  /// The finding for a response archive whose root is not under `root`; nil when it is, or when
  /// the blob holds no response archive of its own.
  func responseRootKeyFinding() -> Finding? {
    guard let archive = misplacedResponseArchive else { return nil }
    return Finding(
      "response-root-key", .warning,
      "the response archive names its root under \(Self.describe(archive.rootKeys)), not root: Apple reads it with "
        + "secure coding, under root, and finds no response (the validators of the dictionary still "
        + "apply) (repair rewrites the key)",
      path: ResumeDataKey.response)
  }
}

extension ResumeData {
  /// Moves the root of the blob's own archive, of the Network.framework blob WebKit's wrapper
  /// holds and of the response archive under the key Apple's decoder for each looks up
  /// (`rootKey(of:)`); request archives are `convertRequests(to:rule:)`'s. One finding, coded
  /// `rule`, per archive moved.
  ///
  /// - Throws: ``ResumeDataError`` when an archive cannot be written again.
  mutating func restoreArchiveRootKeys(rule: String) throws -> [Finding] {
    var changes = [Finding]()
    func moved(_ what: String, from keys: ArchiveRootKeys, to key: ArchiveRootKey, path: String) {
      changes.append(
        Finding(
          rule, .info,
          "\(what)'s root moved from \(Self.describe(keys)) to \(key.rawValue), the key Apple's decoder for it reads",
          path: path))
    }
    if let form = ownArchiveForm, !ownRootKeys.holds(Self.rootKey(of: form)) {
      let wanted = Self.rootKey(of: form)
      moved("the blob's archive", from: ownRootKeys, to: wanted, path: "$top")
      if form == .networkFramework {
        guard let archive else { return changes }
        let bytes = try Self.rekeyed(archive, to: wanted, at: "$top")
        self = try ResumeData(decoding: NetworkFrameworkMask.toggled(bytes))
      } else {
        // Written afresh under the literal (`keyedBytes`).
        isEdited = true
        ownRootKeys = ArchiveRootKeys(wanted)
      }
    }
    if generation == .networkFrameworkWebKit, let nested, let inner = nested.archive,
      !nested.ownRootKeys.holds(Self.rootKey(of: .networkFramework))
    {
      let wanted = Self.rootKey(of: .networkFramework)
      moved(
        "the wrapped Network.framework blob", from: nested.ownRootKeys, to: wanted, path: "data")
      let bytes = NetworkFrameworkMask.toggled(try Self.rekeyed(inner, to: wanted, at: "data"))
      try setEntry("data", .data(bytes))
      // The wrapper keeps its blob as read: read again, so that it holds the new one.
      self = try ResumeData(decoding: try encoded())
    }
    if let response = misplacedResponseArchive {
      let wanted = Self.rootKey(of: .responseArchive)
      moved(
        "the response archive", from: response.rootKeys, to: wanted, path: ResumeDataKey.response)
      try setEntry(
        ResumeDataKey.response,
        .data(try Self.rekeyed(response, to: wanted, at: ResumeDataKey.response)))
    }
    return changes
  }

  /// `archive`'s objects under `key`, encoded (binary).
  static func rekeyed(_ archive: KeyedArchive, to key: ArchiveRootKey, at path: String)
    throws -> Data
  {
    try ResumeDataError.wrapping(at: path) {
      try KeyedArchive(objectsOf: archive, rootKey: key.rawValue, rootUID: archive.rootUID)
        .encoded(as: .binary)
    }
  }
}

import KeyedArchive
import PortableFoundation
import PropertyList

/// A partial file kept by an app or another downloader (a `.part` or `.incomplete` file with its
/// URL and validator beside it), described well enough to make the resume data URLSession would
/// have written for it.
///
/// Nothing here reads the file or asks the server: the caller vouches for the bytes (the
/// `Downloader`'s `TailCheck` compares the file's last bytes with the server's under
/// `If-Range` before a validator is stamped on them).
public struct PartialDownload: Sendable, Hashable {
  /// The URL the bytes came from (the stable one, before any redirect to a signed URL).
  public var url: String
  /// Header fields the requests carry (authorization, say), in order.
  public var headerFields: [URLRequestFields.Header]
  /// The bytes in the partial file: the first `bytes` bytes of the resource.
  public var bytes: Int64
  /// The ETag the bytes belong to, quotes included, as the server sent it.
  public var entityTag: String?
  /// The Last-Modified date the bytes belong to, as the server sent it.
  public var lastModified: String?
  /// The name the system will look for the file under, in its temporary directory
  /// (`CFNetworkDownload_XXXXXX.tmp`, as CFNetwork names them).
  public var tempFileName: String

  /// Describes a partial file.
  public init(
    url: String, bytes: Int64, entityTag: String? = nil, lastModified: String? = nil,
    headerFields: [URLRequestFields.Header] = [],
    tempFileName: String = ResumeData.newTempFileName()
  ) {
    self.url = url
    self.bytes = bytes
    self.entityTag = entityTag
    self.lastModified = lastModified
    self.headerFields = headerFields
    self.tempFileName = tempFileName
  }
}

/// The blob made for a partial file, or why none is made.
public enum PartialFileResume: Sendable, Hashable {
  /// The blob, and the findings: what was made and what to do with the file
  /// (`place-partial-file`).
  case resume(ResumeData, findings: [Finding])
  /// No blob: the system would not resume from it (`reason`, an error finding), with every
  /// finding.
  case refused(reason: Finding, findings: [Finding])

  /// The blob, nil when refused.
  public var blob: ResumeData? {
    if case .resume(let blob, _) = self { blob } else { nil }
  }

  /// Every finding, whichever the answer.
  public var findings: [Finding] {
    switch self {
    case .resume(_, let findings), .refused(_, let findings): findings
    }
  }
}

extension ResumeData {
  /// A temporary file name as CFNetwork makes them: `CFNetworkDownload_` and six random letters
  /// and digits, then `.tmp`.
  public static func newTempFileName() -> String {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
    var generator = SystemRandomNumberGenerator()
    let suffix = String((0..<6).map { _ in alphabet[Int(generator.next() % 62)] })
    return "CFNetworkDownload_\(suffix).tmp"
  }

  /// The generation a target's own loader writes: v2 for iOS 10, v4 for iOS 11, keyed archives
  /// from iOS 12 (info version 4 on iOS 12, 5 after), Network.framework's object for its loader,
  /// and keyed (version 5) for this toolkit.
  public static func writtenGeneration(of target: RepairTarget) -> (
    generation: ResumeDataGeneration, infoVersion: Int?
  ) {
    switch target {
    case .ios10Early, .ios10Late: (.v2, nil)
    case .ios11Early, .ios11Late: (.v4, nil)
    case .ios12: (.keyed, 4)
    case .ios13Later, .linux: (.keyed, 5)
    case .networkFramework: (.networkFramework, nil)
    }
  }

  /// The resume data `target` would have written for a partial file, repaired for it as
  /// `repaired(for:)` repairs, and judged as that system will meet it: refused when it would not
  /// resume from it (no validator, a weak ETag, a header field that cannot be sent).
  ///
  /// The requests are GETs of `partial.url` with its header fields (the current request is the
  /// original one: a redirect is followed again on resume); the partial file is named by
  /// `tempFileName`, and for forms that name it by path (Network.framework's `fileURL`), by that
  /// name in `temporaryDirectory`.
  ///
  /// - Throws: ``ResumeDataError`` (`.invalidEdit`) for a URL that is not http or https, a byte
  ///   count below 1, or a temp file name that is not a bare name; `.unsupported` when the blob
  ///   cannot be made in the target's form.
  public static func forPartialFile(
    _ partial: PartialDownload, on target: RepairTarget, temporaryDirectory: URL? = nil
  ) throws(ResumeDataError) -> PartialFileResume {
    guard isHTTPURL(partial.url), URL(string: partial.url)?.host?.isEmpty == false else {
      throw ResumeDataError(
        .invalidEdit, "\(partial.url) is not an http or https URL", at: ResumeDataKey.downloadURL)
    }
    guard partial.bytes > 0 else {
      throw ResumeDataError(
        .invalidEdit, "a partial file of \(partial.bytes) bytes holds nothing to resume",
        at: ResumeDataKey.bytesReceived)
    }
    guard isSafeBareName(partial.tempFileName) else {
      throw ResumeDataError(
        .invalidEdit,
        "the temp file name \(String(reflecting: partial.tempFileName)) is not a bare name",
        at: ResumeDataKey.tempFileName)
    }
    let request = URLRequestFields(url: partial.url, headerFields: partial.headerFields)
    let (generation, infoVersion) = writtenGeneration(of: target)
    let made: ResumeData
    do {
      let archived = try URLRequestArchive(request).encoded()
      var entries: PropertyListDictionary = [
        ResumeDataKey.downloadURL: .string(partial.url),
        ResumeDataKey.bytesReceived: .integer(PropertyListInteger(partial.bytes)),
        ResumeDataKey.currentRequest: .data(archived),
        ResumeDataKey.originalRequest: .data(archived),
      ]
      if let tag = partial.entityTag { entries[ResumeDataKey.entityTag] = .string(tag) }
      if let date = partial.lastModified {
        entries[ResumeDataKey.serverDownloadDate] = .string(date)
      }
      entries[ResumeDataKey.tempFileName] = .string(partial.tempFileName)
      made = try ResumeData(
        building: entries, as: generation, infoVersion: infoVersion,
        temporaryDirectory: temporaryDirectory)
    } catch let error as ResumeDataError {
      throw error
    } catch {
      throw ResumeDataError(.unsupported, "the blob cannot be made: \(error)", at: "")
    }
    let repair: RepairResult
    do {
      repair = try made.repaired(for: target, temporaryDirectory: temporaryDirectory)
    } catch {
      let reason = Finding(repairFailure: error, for: target)
      return .refused(reason: reason, findings: [reason])
    }
    guard let blob = repair.blob else {
      let reason = repair.findings.first { $0.severity == .error } ?? repair.findings[0]
      return .refused(reason: reason, findings: repair.findings)
    }
    // The partial file is not where the blob names it yet: it is judged without it.
    let judgements = blob.judgements(for: target).filter { $0.outcome != .unaffected }
    var findings = repair.findings + judgements.map(\.finding)
    if let worst = judgements.max(by: { $0.outcome < $1.outcome }), worst.outcome > .resume {
      return .refused(reason: worst.finding, findings: findings)
    }
    findings.append(placement(of: partial, blob: blob, on: target))
    return .resume(blob, findings: findings)
  }

  /// Where the partial file must be for `target` to find it.
  private static func placement(
    of partial: PartialDownload, blob: ResumeData, on target: RepairTarget
  )
    -> Finding
  {
    let name = blob.tempFileName ?? partial.tempFileName
    let message: String
    switch target {
    case .linux:
      message =
        "keep the partial file as \(name) in the directory given to `resumedata resume --temp-dir`"
    case .networkFramework:
      let path = blob.localPath.map { " (\(plainPath($0)))" } ?? ""
      message =
        "move the partial file to the app's temporary directory, NSTemporaryDirectory(), as \(name)\(path), before downloadTask(withResumeData:)"
    default:
      message =
        "move the partial file to the app's temporary directory, NSTemporaryDirectory(), as \(name), before downloadTask(withResumeData:) (a background session's file is nsurlsessiond's, out of the app's reach)"
    }
    return Finding(
      "place-partial-file", .info, message,
      path: blob.tempFileName != nil ? ResumeDataKey.tempFileName : ResumeDataKey.localPath)
  }
}

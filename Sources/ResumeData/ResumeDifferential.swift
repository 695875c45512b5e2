@_spi(Differential) import KeyedArchive
import PortableFoundation

/// The check that `ResumeData(decoding:)`, which reads binary keyed blobs in place when it can,
/// gives exactly what the eager path (`init(decodingEagerly:)`) gives. For the differential tests
/// and the fuzz harness.
@_spi(Differential)
public enum ResumeDifferential {
  /// Where the two paths' outcomes differ, or nil when both fail with the same error, or both read
  /// the same typed fields, requests and findings, equal blobs and archives, and the same encoding.
  public static func difference(_ data: Data, limits: KeyedArchiveLimits = .default) -> String? {
    let fast = Result { try ResumeData(decoding: data, limits: limits) }
    let eager = Result { try ResumeData(decodingEagerly: data, limits: limits) }
    if let difference = RequestDifferential.compare(
      fast, eager, sameError: { $0 as? ResumeDataError == $1 as? ResumeDataError },
      inPlace: \.isReadInPlace, typedDifference: typedDifference,
      same: { $0 == $1 && $0.archive == $1.archive }, encoded: { try $0.encoded() })
    {
      return difference
    }
    // `compare` decodes the fast blob's archive before encoding it; a blob read in place and
    // encoded first is not decoded when its bytes are already its encoding. Compare that way too.
    guard case .success(let eagerBlob) = eager,
      let untouched = try? ResumeData(decoding: data, limits: limits)
    else { return nil }
    let inPlace = untouched.isReadInPlace
    if (try? untouched.encoded()) != (try? eagerBlob.encoded()) {
      return "encodings differ when encoded before the archive is decoded (in place: \(inPlace))"
    }
    return nil
  }

  /// Where `ResumeData.healthyKeyedBlob(data, for: target, limits: limits)`, when it recognizes
  /// the blob, says something the full path does not: nil when it does not recognize it, or when
  /// decoding reads a `.keyed` blob in a keyed archive of the same info version, without findings
  /// (for no target, nor for `target`), and a repair for `target` keeps it as its own bytes and
  /// reports nothing.
  public static func healthyDifference(
    _ data: Data, for target: RepairTarget?, limits: KeyedArchiveLimits = .default
  ) -> String? {
    guard let healthy = ResumeData.healthyKeyedBlob(data, for: target, limits: limits) else {
      return nil
    }
    guard let blob = try? ResumeData(decoding: data, limits: limits) else {
      return "recognized as healthy, but does not decode"
    }
    if blob.generation != .keyed || blob.container != .keyedArchive {
      return "recognized as healthy, but decodes as \(blob.generation) in \(blob.container)"
    }
    if blob.infoVersion != healthy.infoVersion {
      return "info version \(String(describing: healthy.infoVersion)), decoded "
        + String(describing: blob.infoVersion)
    }
    if let finding = blob.findings().first ?? blob.findings(for: target).first {
      return "recognized as healthy, but diagnosed \(finding.code)"
    }
    return untouchedDifference(blob, read: data, for: target, findings: [])
  }

  /// Where `ResumeData.reading(data, for: target, limits: limits)` says something the full path
  /// does not: nil when it decodes the blob as `init(decoding:limits:)` does (or both fail with
  /// the same error), or recognizes a healthy plain blob that decoding reads as a `.v2` blob of
  /// the same container and info version, with the findings it reports (for no target, and for
  /// `target`), which a repair for `target` keeps as its own bytes, reporting nothing.
  public static func healthyPlainDifference(
    _ data: Data, for target: RepairTarget?, limits: KeyedArchiveLimits = .default
  ) -> String? {
    let reading = Result { try ResumeData.reading(data, for: target, limits: limits) }
    let full = Result { try ResumeData(decoding: data, limits: limits) }
    let healthy: HealthyPlainBlob
    switch (reading, full) {
    case (.failure(let error), .failure(let fullError)):
      return error as? ResumeDataError == fullError as? ResumeDataError
        ? nil : "errors differ: \(error) vs \(fullError)"
    case (.failure(let error), .success):
      return "the reading fails (\(error)), the full path decodes"
    case (.success, .failure(let error)):
      return "the reading succeeds, the full path fails: \(error)"
    case (.success(.decoded(let blob)), .success(let decoded)):
      if let field = typedDifference(blob, decoded) { return "decoded: \(field) differs" }
      return blob == decoded ? nil : "decoded, but not as the full path decodes"
    case (.success(.healthy(let recognized)), .success):
      healthy = recognized
    }
    guard case .success(let blob) = full else { return nil }
    if blob.generation != .v2 || blob.container != healthy.container {
      return "recognized as healthy in \(healthy.container), but decodes as \(blob.generation) "
        + "in \(blob.container)"
    }
    if blob.infoVersion != healthy.infoVersion {
      return "info version \(String(describing: healthy.infoVersion)), decoded "
        + String(describing: blob.infoVersion)
    }
    for found in [blob.findings(), blob.findings(for: target)] where found != healthy.findings {
      return "recognized as healthy with \(healthy.findings.map(\.code)), but diagnosed "
        + "\(found.map(\.code))"
    }
    return untouchedDifference(blob, read: data, for: target, findings: healthy.findings)
  }

  /// Where the repair for `target` (none without one) of a blob recognized as healthy, `blob`
  /// decoded from `data`, does otherwise than keep it: a repair that fails, reports anything or
  /// writes other bytes, or whose blob is diagnosed otherwise than `findings`.
  private static func untouchedDifference(
    _ blob: ResumeData, read data: Data, for target: RepairTarget?, findings: [Finding]
  ) -> String? {
    guard let target else { return nil }
    let repair: RepairResult
    do {
      repair = try blob.repaired(for: target)
    } catch {
      return "recognized as healthy, but its repair for \(target) fails: \(error)"
    }
    if let finding = repair.findings.first {
      return "recognized as healthy, but its repair for \(target) reports \(finding.code)"
    }
    guard let repaired = repair.blob,
      (try? repaired.encoded(keepingUntouchedBytes: true)) == data
    else {
      return "recognized as healthy, but its repair for \(target) changes its bytes"
    }
    let diagnosed = repaired.findings()
    if diagnosed != findings {
      return "recognized as healthy, but its repair for \(target) is diagnosed "
        + "\(diagnosed.map(\.code))"
    }
    return nil
  }

  /// The first typed field in which two blobs differ, or nil.
  public static func typedDifference(_ lhs: ResumeData, _ rhs: ResumeData) -> String? {
    for (name, left, right) in [
      ("currentRequest", lhs.currentRequest, rhs.currentRequest),
      ("originalRequest", lhs.originalRequest, rhs.originalRequest),
    ] {
      guard let left, let right else {
        if (left == nil) != (right == nil) { return name }
        continue
      }
      if let field = RequestDifferential.typedDifference(left, right) { return "\(name).\(field)" }
    }
    let fields: [(String, (ResumeData) -> AnyHashable?)] = [
      ("generation", { $0.generation }), ("container", { $0.container }),
      ("entries", { $0.entries }), ("entry order", { $0.entries.keys }),
      ("archivedEntries", { $0.archivedEntries }), ("downloadURL", { $0.downloadURL }),
      ("bytesReceived", { $0.bytesReceived }), ("entityTag", { $0.entityTag }),
      ("serverDownloadDate", { $0.serverDownloadDate }), ("tempFileName", { $0.tempFileName }),
      ("localPath", { $0.localPath }), ("byteRange", { $0.byteRange }),
      ("infoVersion", { $0.infoVersion }), ("unknownKeys", { $0.unknownKeys }),
      ("findings", { $0.findings() }),
    ]
    return fields.first { $0.1(lhs) != $0.1(rhs) }?.0
  }

  /// Where a conversion's blob, which is made without reading its bytes back where that is
  /// certain to give the same (`init?(writtenAsXML:)`, `init?(writtenAsKeyed:)`), differs from
  /// reading them back; nil when they are the same, when the conversion fails, or when the blob is
  /// of the target already.
  public static func conversionDifference(
    _ blob: ResumeData, to target: ResumeDataGeneration
  ) -> String? {
    // A blob already of the target is given back as it is, read from its own bytes.
    // The bytes the conversion wrote (`encoded()` would write the blob's values afresh).
    guard let conversion = try? blob.converted(to: target), !conversion.findings.isEmpty,
      let bytes = try? conversion.blob.encoded(keepingUntouchedBytes: true)
    else { return nil }
    let converted = conversion.blob
    if converted.originalLengthIsWithinBounds == false {
      return "the \(target.rawValue) blob's XML lies outside the bounds of its length"
    }
    guard let read = try? ResumeData(decoding: bytes) else {
      return "the \(target.rawValue) blob does not read back"
    }
    if let field = typedDifference(converted, read) { return "\(target.rawValue): \(field)" }
    if converted != read { return "\(target.rawValue): the blobs differ" }
    if (try? read.encoded()) != (try? converted.encoded()) {
      return "\(target.rawValue): the encodings differ"
    }
    return nil
  }

  /// Where a repair's blob, which is made without reading its bytes back (a conversion's XML
  /// written on first use, request archives renamed in their bytes keeping the source's requests),
  /// differs in its typed fields from reading the bytes it writes back; nil when they are the same
  /// or when the repair refuses the blob or fails.
  public static func repairDifference(_ blob: ResumeData, for target: RepairTarget) -> String? {
    guard let repaired = try? blob.repaired(for: target).blob,
      let bytes = try? repaired.encoded(keepingUntouchedBytes: true)
    else { return nil }
    guard let read = try? ResumeData(decoding: bytes) else {
      return "the blob repaired for \(target.rawValue) does not read back"
    }
    guard let difference = typedDifference(repaired, read) else { return nil }
    // An edit puts a new key last, and the XML writer sorts the keys: an edited XML blob's
    // entries are in another order than its bytes', with the same values.
    if difference == "entry order", repaired.container == .xmlPlist { return nil }
    return "\(target.rawValue): \(difference)"
  }

  /// A Network.framework blob's request and response objects as it archived each on its own, by
  /// field (`currentRequest`, `originalRequest`, `response`); nil for other blobs.
  public static func networkFrameworkArchives(_ blob: ResumeData) -> [String: Data]? {
    guard let parts = blob.networkFrameworkParts else { return nil }
    var archives = [String: Data]()
    archives["currentRequest"] = parts.currentRequest.bytes
    archives["originalRequest"] = parts.originalRequest.bytes
    archives["response"] = parts.response.bytes
    return archives
  }

  /// A Network.framework blob's response validators (`ETag`, `Last-Modified`) as read with its
  /// parts in place; nil when they are found by decoding the response, or for other blobs.
  public static func responseValidatorsReadInPlace(_ blob: ResumeData) -> [String?]? {
    blob.networkFrameworkParts?.responseValidators
  }

  /// Where writing from the bytes and writing through the decoded tree differ for a blob, or nil:
  /// each object of a Network.framework blob archived on its own (`currentRequest`,
  /// `originalRequest`, `response`) and its partial file's name and URL, as the blob holds them
  /// against what its decoded root gives, and the blob's plain entries archived as a keyed root
  /// (both root keys, mutable or not), compared where the writer from the bytes writes them; and
  /// the response's validators read with the parts, against its decoded header fields.
  public static func writerDifference(_ blob: ResumeData) -> String? {
    if let parts = blob.networkFrameworkParts, let info = blob.networkFrameworkInfo {
      let tree = NetworkFrameworkParts(info: info)
      for (field, fromBytes, decoded) in [
        ("currentRequest", parts.currentRequest, tree.currentRequest),
        ("originalRequest", parts.originalRequest, tree.originalRequest),
        ("response", parts.response, tree.response),
      ] where fromBytes.bytes != decoded.bytes {
        return "\(field) archived from the bytes differs from its decoded value"
      }
      if parts.tempFileName != tree.tempFileName || parts.fileURL != tree.fileURL {
        return "the partial file read from the bytes differs from the decoded root"
      }
      if let values = parts.responseValidators {
        let headers = tree.response.bytes.flatMap { try? URLResponseArchive(decoding: $0) }?
          .headerFields
        let decoded = NetworkFrameworkParts.validatorNames.map { name in
          headers?.first { HTTPFieldName.equal($0.name, name) }?.value
        }
        if values != decoded {
          return "the response's validators read from the bytes differ from its decoded headers"
        }
      }
    }
    let pairs = blob.entries.entries.map {
      ArchivedDictionaryEntry(.string($0.key), ResumeData.archived($0.value))
    }
    for mutable in [true, false] {
      for rootKey in ["NSKeyedArchiveRootObjectKey", "root"] {
        guard
          let straight = KeyedArchive.encodedDictionary(
            pairs, mutable: mutable, rootKey: rootKey)
        else { continue }
        let tree = try? KeyedArchive(root: .dictionary(pairs, mutable: mutable), rootKey: rootKey)
          .encoded(as: .binary)
        if straight != tree { return "the entries written as a keyed root (\(rootKey)) differ" }
      }
    }
    return nil
  }
}

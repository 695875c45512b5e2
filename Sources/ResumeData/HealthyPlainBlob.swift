import KeyedArchive
import PortableFoundation
import PropertyList

// A fast path. Its tree twin: `ResumeData(decoding:)`, `findings` and `repaired(for:)`. Held
// equal by `ResumeDifferential.healthyPlainDifference` in
// Tests/ResumeDataTests/HealthyPlainBlobTests.swift, by the batch's results with the one pass
// off (Tests/ResumeDataBatchTests/HealthyBlobBatchTests.swift), and by the fuzz harness
// Fuzz/Sources/FuzzResumeData/main.swift.

/// A plain v2 blob that needs nothing, recognized without its request archives being decoded
/// (``ResumeData/reading(_:for:limits:)``): what a batch reports of it besides its bytes.
public struct HealthyPlainBlob: Sendable, Hashable {
  /// The container: `.xmlPlist` or `.binaryPlist`.
  public let container: ResumeDataContainer
  /// `NSURLSessionResumeInfoVersion`: 2, or nil when the blob has none.
  public let infoVersion: Int?
  /// `findings()` of the blob, which are also its findings for the target it was read for: at
  /// most the `ios10-request-layout` note, which every v2 blob with its requests in the standard
  /// layout gets.
  public let findings: [Finding]

  /// The generation: always `.v2`, the plain form a pipeline meets most.
  public var generation: ResumeDataGeneration { .v2 }
}

/// What ``ResumeData/reading(_:for:limits:)`` makes of a blob.
public enum ResumeDataReading: Sendable {
  /// A plain v2 blob that needs nothing, its request archives checked but not decoded.
  case healthy(HealthyPlainBlob)
  /// Any other blob, decoded as `ResumeData(decoding:limits:)` decodes it.
  case decoded(ResumeData)
}

extension ResumeData {
  /// Reads a blob as `init(decoding:limits:)` does, but answers a healthy plain v2 blob without
  /// decoding its request archives, diagnosing or repairing it: they are only checked, in place,
  /// for what a diagnosis asks of them. The property list is parsed once either way.
  ///
  /// `.healthy` only when all of this holds of `data` (read under `limits`):
  /// - `ResumeData(decoding:limits:)` reads it as a `.v2` blob of the same container and info
  ///   version;
  /// - `findings()`, and `findings(for: target)` with a target, are the blob's `findings`;
  /// - with a `target`, `repaired(for: target)` keeps the blob untouched and reports nothing.
  ///
  /// `.decoded` says nothing about the blob: the full path must tell. So that the two can never
  /// disagree, this reading accepts less than they do: the nine keys CFNetwork writes (no byte
  /// range, segment map or unknown key), each value of the kind it is written as, info version 2
  /// or none, a temp file name, both requests in the standard layout with header fields that are
  /// surely sendable, both under `NSKeyedArchiveRootObjectKey`, and the current one's method
  /// surely GET; iOS 10.0–10.1, whose requests are
  /// rewritten, and targets that read no v2 blob are left to the full path.
  ///
  /// - Throws: what `init(decoding:limits:)` throws.
  public static func reading(
    _ data: Data, for target: RepairTarget?, limits: KeyedArchiveLimits = .default
  ) throws -> ResumeDataReading {
    var blob = try ResumeData(decodingAlone: data, limits: limits)
    if let healthy = blob.healthyPlainOrRequestsDecoded(for: target) {
      return .healthy(healthy)
    }
    return .decoded(blob)
  }

  /// The healthy v2 blob this is, before its requests are decoded; else nil, with the requests
  /// decoded as `refreshRequests()` decodes them (through the views of them made here, when it
  /// got that far).
  private mutating func healthyPlainOrRequestsDecoded(for target: RepairTarget?)
    -> HealthyPlainBlob?
  {
    guard target.map({ $0 != .ios10Early && $0.readable.contains(.v2) }) ?? true,
      container == .xmlPlist || container == .binaryPlist, generation == .v2, !isTiny,
      let values = PlainValues(entries),
      case .data(let currentBytes)? = values[.currentRequest],
      case .data(let originalBytes)? = values[.originalRequest]
    else {
      refreshRequests()
      return nil
    }
    // Under the default limits, as `refreshRequests` decodes each request. The same bytes
    // archive one request twice when there was no redirect, read once as it reads them.
    let limits = KeyedArchiveLimits.default
    let sameBytes = originalBytes == currentBytes
    let currentView = KeyedArchiveView(currentBytes, limits: limits.propertyList)
    let originalView =
      sameBytes ? currentView : KeyedArchiveView(originalBytes, limits: limits.propertyList)
    // The requests before the other values: a blob whose requests are not healthy (one in the
    // `$N` layout, mostly) has them decoded through these views at once.
    // Both under the key CFNetwork reads them by (`request-root-key`), so that iOS 10.0–10.1
    // cannot read back the first.
    if let current = currentView.flatMap(URLRequestArchive.inPlaceSummary(of:)),
      current.rootKeyIsRootObjectKey, current.methodIsSurelyGET,
      current.headerFieldsAreSurelySendable,
      let original = sameBytes ? current : originalView.flatMap(URLRequestArchive.inPlaceSummary),
      original.rootKeyIsRootObjectKey, original.headerFieldsAreSurelySendable,
      let infoVersion = Self.healthyInfoVersion(values)
    {
      return HealthyPlainBlob(
        container: container, infoVersion: infoVersion,
        findings: [Self.ios10RequestLayout(path: ResumeDataKey.currentRequest)])
    }
    // Decoded as `refreshRequests` decodes a plain blob's requests (the same bytes once), here
    // rather than through it with these views: its general path cost a `$N` blob 2,400
    // instructions more.
    let current = try? URLRequestArchive(decoding: currentBytes, view: currentView, limits: limits)
    setDecodedRequest(0, current)
    setDecodedRequest(
      1,
      sameBytes
        ? current
        : try? URLRequestArchive(decoding: originalBytes, view: originalView, limits: limits))
    return nil
  }

  /// The info version of a blob whose values but its requests are healthy (`.some(nil)` when it
  /// has none); nil when the full path must tell.
  private static func healthyInfoVersion(_ values: PlainValues) -> Int?? {
    guard let received = values[.bytesReceived]?.int64Value, received > 0,
      case .string(let name)? = values[.tempFileName], isSafeBareName(name),
      case .string(let url)? = values[.downloadURL], isHTTPURL(url)
    else { return nil }
    // An ETag that is not weak, or else a date; either a string.
    if let tag = values[.entityTag] {
      guard case .string(let tag) = tag, !tag.hasPrefix("W/") else { return nil }
    } else {
      guard case .string? = values[.serverDownloadDate] else { return nil }
    }
    if let date = values[.serverDownloadDate], date.stringValue == nil { return nil }
    guard let version = values[.infoVersion] else { return .some(nil) }
    return version.int64Value == 2 ? 2 : nil
  }
}

/// The values of a plain dictionary whose keys are each one of the nine CFNetwork writes
/// (`ResumeDataKey.all`'s first nine).
private struct PlainValues {
  typealias Key = WrittenKey

  // Each key's position in the dictionary, or -1.
  private var positions = InlineArray<9, Int>(repeating: -1)
  private let entries: PropertyListDictionary

  /// Nil when a key is not one of the nine, or is there twice.
  init?(_ entries: PropertyListDictionary) {
    for position in entries.indices {
      guard let key = Self.key(entries[position].key), positions[key.rawValue] < 0 else {
        return nil
      }
      positions[key.rawValue] = position
    }
    self.entries = entries
  }

  /// The key spelled as `key`, if it is one of the nine: told by its length (two of them share
  /// one), then compared.
  private static func key(_ key: String) -> Key? {
    let candidate: Key
    switch key.utf8.count {
    case 23: candidate = .downloadURL
    case 27: candidate = .entityTag
    case 29: candidate = .infoVersion
    case 31:
      return key == Key.bytesReceived.name
        ? .bytesReceived : key == Key.localPath.name ? .localPath : nil
    case 32: candidate = .currentRequest
    case 33: candidate = .originalRequest
    case 34: candidate = .tempFileName
    case 36: candidate = .serverDownloadDate
    default: return nil
    }
    return key == candidate.name ? candidate : nil
  }

  /// The value of `key`, or nil when it is absent.
  subscript(key: Key) -> PropertyListValue? {
    let position = positions[key.rawValue]
    return position < 0 ? nil : entries[position].value
  }
}

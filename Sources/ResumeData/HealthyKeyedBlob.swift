import KeyedArchive
import PortableFoundation
@_spi(InPlace) import PropertyList

// A fast path. Its tree twin: `ResumeData(decoding:)`, `findings` and `repaired(for:)`. Held
// equal by `ResumeDifferential.healthyDifference` in
// Tests/ResumeDataTests/HealthyKeyedBlobTests.swift, by the batch's results with the one pass
// off (Tests/ResumeDataBatchTests/HealthyBlobBatchTests.swift), and by the fuzz harness
// Fuzz/Sources/FuzzResumeData/main.swift.

/// A keyed blob that needs nothing, recognized in one pass over its bytes
/// (``ResumeData/healthyKeyedBlob(_:for:limits:)``): what a batch reports of it besides its bytes.
public struct HealthyKeyedBlob: Sendable, Hashable {
  /// `NSURLSessionResumeInfoVersion`, as ``ResumeData/infoVersion`` reads it.
  public let infoVersion: Int?
}

extension ResumeData {
  /// Recognizes the blob a pipeline meets most, a healthy keyed one as CFNetwork writes it, without
  /// decoding it: the archive and both request archives are checked as `init(decoding:limits:)`
  /// checks them, and only the values a diagnosis reads are looked at, in place.
  ///
  /// Not nil only when all of this holds of `data` (read under `limits`):
  /// - `ResumeData(decoding:limits:)` reads it as a `.keyed` blob in a keyed archive;
  /// - `findings(for: target)` and `findings()` are empty;
  /// - with a `target`, `repaired(for: target)` keeps the blob untouched and reports nothing.
  ///
  /// Nil says nothing about the blob: it only means the full path must tell (a finding, a repair,
  /// a value in a shape this reading leaves to it, a temporary directory to look in…). So that the
  /// two can never disagree, this reading accepts less than they do: the nine keys CFNetwork
  /// writes (no byte range, segment map or unknown key), each value of the kind it is written as,
  /// a temp file name, the archive and both requests under `NSKeyedArchiveRootObjectKey`, the
  /// requests in the standard layout with header fields that are surely sendable.
  public static func healthyKeyedBlob(
    _ data: Data, for target: RepairTarget?, limits: KeyedArchiveLimits = .default
  ) -> HealthyKeyedBlob? {
    data.withUnsafeBytes { healthyKeyedBlob(bytes: $0, for: target, limits: limits) }
  }

  /// `healthyKeyedBlob(_:for:limits:)` of a blob's bytes in memory (read where they are, during
  /// the call): for a pipeline that holds blobs in buffers of its own.
  public static func healthyKeyedBlob(
    bytes: UnsafeRawBufferPointer, for target: RepairTarget?,
    limits: KeyedArchiveLimits = .default
  ) -> HealthyKeyedBlob? {
    // A target that cannot read a keyed blob converts it (`target-cannot-read`): known before
    // reading a byte.
    if let target, !target.readable.contains(.keyed) { return nil }
    // The views read the blob's bytes where they are: they live only during this call.
    guard bytes.count >= tinyBlobSize, !NetworkFrameworkMask.isMasked(bytes: bytes),
      let view = KeyedArchiveView(borrowing: bytes, limits: limits.propertyList),
      view.hasArchiver,
      // Under the key CFNetwork reads, and that one alone (`archive-root-key`).
      view.rootKeys == .rootObjectKey,
      let root = view.plainRootArrays(limits: limits),
      let values = HealthyValues(view, root)
    else { return nil }
    let table = view.table
    // Every value but the local path (not read once there is a temp file name) must be of the
    // kind CFNetwork writes: another kind reads as absent, which a finding may follow.
    guard let received = values.integer(.bytesReceived, in: table), received > 0,
      let name = values.ascii(.tempFileName, in: table), isSafeBareName(bytes: name),
      let current = values.object(.currentRequest), table.isKind(current, .data),
      let original = values.object(.originalRequest), table.isKind(original, .data),
      let url = values.ascii(.downloadURL, in: table), isHTTPURL(bytes: url)
    else { return nil }
    // An ETag that is not weak, or else a date; either a string.
    if values.object(.entityTag) != nil {
      guard let tag = values.ascii(.entityTag, in: table),
        tag.count < 2 || tag[0] != UInt8(ascii: "W") || tag[1] != UInt8(ascii: "/")
      else { return nil }
    } else {
      guard values.ascii(.serverDownloadDate, in: table) != nil else { return nil }
    }
    if let date = values.object(.serverDownloadDate), !table.isKind(date, .string) { return nil }
    var infoVersion: Int?
    if let version = values.object(.infoVersion) {
      guard table.isKind(version, .integer) else { return nil }
      infoVersion = table.integer(version).int64Value.map { Int($0) }
    }
    // Nor can one that writes an older info version read this one.
    if let target, (target.keyedInfoVersion ?? .max) < infoVersion ?? 0 { return nil }
    // The requests last: they cost the most. The same bytes archive one request twice when there
    // was no redirect, read once as `refreshRequests` does.
    // Read where they lie in the checked blob: no copy to make and free.
    let currentBytes = table.dataBytes(current)
    guard let currentRequest = healthyRequest(currentBytes), currentRequest.methodIsSurelyGET
    else { return nil }
    let originalBytes = table.dataBytes(original)
    if originalBytes.count != currentBytes.count
      || memcmp(originalBytes.baseAddress!, currentBytes.baseAddress!, currentBytes.count) != 0
    {
      guard healthyRequest(originalBytes) != nil else { return nil }
    }
    return HealthyKeyedBlob(infoVersion: infoVersion)
  }

  /// A request archive read in place in the standard layout under the key CFNetwork reads it by,
  /// with header fields surely sendable.
  private static func healthyRequest(_ bytes: UnsafeRawBufferPointer) -> InPlaceRequestSummary? {
    // Under the default limits, as `refreshRequests` decodes each request.
    guard let request = URLRequestArchive.inPlaceSummary(of: bytes, limits: .default),
      request.rootKeyIsRootObjectKey, request.headerFieldsAreSurelySendable
    else { return nil }
    return request
  }
}

/// The values of a keyed root dictionary whose keys are each one of the nine CFNetwork writes
/// (`ResumeDataKey.all`'s first nine), each once, as plain objects of the view.
private struct HealthyValues {
  typealias Key = WrittenKey

  // Each key's value object, or -1.
  private var objects = InlineArray<9, Int>(repeating: -1)

  /// Nil when an entry is not what `plainRootDictionary` reads, or its key is not one of the nine,
  /// or is there twice.
  init?(_ view: KeyedArchiveView, _ root: KeyedArchiveView.PlainRootArrays) {
    let known = ResumeDataKey.allKnown
    let table = view.table
    for position in 0..<root.count {
      guard let (key, value) = view.plainRootEntry(root, position),
        let bytes = table.asciiBytes(key), let index = known.index(of: bytes),
        let which = Key(rawValue: index), object(which) == nil
      else { return nil }
      objects[which.rawValue] = value
    }
  }

  /// The value object of `key`, or nil when it is absent.
  func object(_ key: Key) -> Int? {
    let object = objects[key.rawValue]
    return object < 0 ? nil : object
  }

  /// The bytes of `key`'s value when it is an ASCII string.
  func ascii(_ key: Key, in table: BinaryObjects) -> UnsafeRawBufferPointer? {
    guard let object = object(key), table.isKind(object, .string) else { return nil }
    return table.asciiBytes(object)
  }

  /// The value of `key` when it is an integer within `Int64`.
  func integer(_ key: Key, in table: BinaryObjects) -> Int64? {
    guard let object = object(key), table.isKind(object, .integer) else { return nil }
    return table.integer(object).int64Value
  }
}

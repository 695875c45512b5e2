import KeyedArchive
import PortableFoundation
@_spi(InPlace) @_spi(Writing) import PropertyList

// `init(decoding:limits:)` reads a binary keyed blob whose root holds plain values, and a
// Network.framework blob whose root the sub-archive writer follows, in place; its tree twin is
// `init(parsing:limits:)` (`init(decodingEagerly:)`, for the differentials). Held equal by
// `ResumeDifferential.difference` in Tests/ResumeDataTests/ResumeFastPathTests.swift and
// Tests/ResumeDataTests/NetworkFrameworkInPlaceTests.swift, and by the fuzz harness
// Fuzz/Sources/FuzzResumeData/main.swift. The blobs conversions make without reading their bytes
// back (`init?(xmlOf:…)`, `init?(writtenAsKeyed:…)`) have as twin `init(decoding:)` of those bytes,
// held equal by `ResumeDifferential.conversionDifference` and `repairDifference`
// (Tests/ResumeDataTests/NetworkFrameworkInPlaceTests.swift,
// Tests/ResumeDataTests/RepairedWithoutReadingTests.swift, Fuzz/Sources/FuzzResumeData/main.swift).

/// Which producer's form a resume blob has (format reference §1).
public enum ResumeDataGeneration: String, Sendable, Hashable, CaseIterable {
  /// CFNetwork on iOS 7–8 (and third-party producers): a plain dictionary with `LocalPath`.
  case v1
  /// CFNetwork on iOS 9–10: a plain dictionary with `TempFileName`, info version 2.
  case v2
  /// CFNetwork on iOS 11: a plain dictionary, info version 4, perhaps with `ByteRange`.
  case v4
  /// CFNetwork from iOS 12: an NSKeyedArchiver archive of the dictionary (info version 4, then 5).
  case keyed
  /// Network.framework's loader: a masked keyed archive of an `NWURLSessionDownloadResumeInfo`.
  case networkFramework = "network-framework"
  /// A Network.framework blob inside WebKit's keyed wrapper (`data` + `LocalPath`).
  case networkFrameworkWebKit = "network-framework-webkit"
  /// Safari's own downloads: a keyed dictionary with `LocalPath` and no original request or temp
  /// name.
  case safari
}

/// The container a resume blob is stored in.
public enum ResumeDataContainer: String, Sendable, Hashable, CaseIterable {
  /// A plain XML property list.
  case xmlPlist = "xml-plist"
  /// A plain binary property list.
  case binaryPlist = "binary-plist"
  /// An NSKeyedArchiver archive in a binary property list.
  case keyedArchive = "keyed-archive"
  /// An NSKeyedArchiver archive in an XML property list.
  case keyedArchiveXML = "keyed-archive-xml"
  /// Network.framework's keyed archive with its first 8 bytes XOR-masked.
  case nwArchive = "nw-archive"
}

/// A decoded resume blob of any generation: what it holds, typed, with everything kept verbatim for
/// re-encoding.
///
/// Decoding follows CFNetwork's detection order: a masked Network.framework blob first; then a
/// property list that is a keyed archive (falling back to the plain dictionary when the archive
/// does not decode, as CFNetwork does); then a plain dictionary. The generation is decided from the
/// contents, never assumed from a version number alone.
public struct ResumeData: Sendable, Hashable {
  /// The producer's form.
  public internal(set) var generation: ResumeDataGeneration
  /// The container.
  public let container: ResumeDataContainer
  /// The resume dictionary's plain values, keys in stored order. Empty for Network.framework blobs,
  /// whose fields are objects (see `networkFrameworkInfo`).
  public internal(set) var entries: PropertyListDictionary
  /// Values only a keyed archive can hold (such as `NSURLSessionResumeExtractor`), decoded, by key.
  public internal(set) var archivedEntries: [String: ArchivedValue]
  /// The keyed archive, for keyed forms: kept so that re-encoding reproduces it. A blob read in
  /// place (see `init(decoding:limits:)`) decodes it on first use.
  public var archive: KeyedArchive? { archiveStorage?.archive }
  private let archiveStorage: LazyKeyedArchive?
  /// The root object of a Network.framework blob (`NWURLSessionDownloadResumeInfo`), decoded. A
  /// blob read in place (see `init(decoding:limits:)`) decodes it on first use.
  public var networkFrameworkInfo: ArchivedObject? { networkFramework.value?.info }
  // A Network.framework blob's root: its requests and response archived on their own, and the
  // decoded object. Made from the archive, so it takes no part in equality.
  private let networkFramework: Unequated<NetworkFrameworkRoot?>
  /// Whether this is a Network.framework blob (not one in WebKit's wrapper).
  var isNetworkFramework: Bool { networkFramework.value != nil }
  // The Network.framework blob inside WebKit's wrapper (an array only to let the type nest).
  private let nestedStorage: [ResumeData]
  // The input, for binary plists: its object table keeps the sharing the producer chose. (For a
  // plain blob a conversion made, the XML it is written as, written on first use.)
  private let original: BlobBytes
  // A keyed root dictionary's keys in archived order (plain and archived values interleave there),
  // and whether it was an NSMutableDictionary: what a re-archived root must keep.
  var rootKeyOrder: [String] = []
  var rootIsMutable = true
  // Which of Apple's two root keys the blob's own archive names its root by (empty for a plain
  // dictionary): whether Apple's decoder for its form finds it (`archiveRootKeyFinding`).
  var ownRootKeys: ArchiveRootKeys = []
  // Set by every edit: an edited blob is written afresh rather than from `original`.
  var isEdited = false
  // Whether the response archive, if any, is known to be under the key Apple reads it by (the
  // blob was made by a conversion, which writes it so): diagnosis and repair then do not look.
  // Takes no part in equality: it only saves looking again.
  var responseRootKeyIsKnown = Unequated(false)
  // Whether every key of `entries` is known to be one of `ResumeDataKey.known`, found in passing
  // when a blob is read in place (false: not known to be; `hasUnknownKeys` then looks). Takes no
  // part in equality: it only saves looking again.
  var entryKeysAreKnown = Unequated(false)
  // The current and original requests, decoded once (nil when absent or undecodable): diagnosis,
  // display and repair read them many times. Kept in step with `entries` by `refreshRequests`.
  // Two fields, not an array: an array of optionals is copied and destroyed through generic
  // witnesses, which cost more than the rest of a diagnosis.
  private var decodedCurrentRequest: URLRequestArchive?
  private var decodedOriginalRequest: URLRequestArchive?

  /// The current (0) or original (1) request as last decoded from `entries`.
  func decodedRequest(_ index: Int) -> URLRequestArchive? {
    index == 0 ? decodedCurrentRequest : decodedOriginalRequest
  }

  /// Sets the current (0) or original (1) request decoded from `entries`, for a caller that set
  /// the entry to bytes whose decoding it knows without reading them (see `rewriteRequests`).
  mutating func setDecodedRequest(_ index: Int, _ request: URLRequestArchive?) {
    if index == 0 { decodedCurrentRequest = request } else { decodedOriginalRequest = request }
  }

  /// The Network.framework blob inside WebKit's wrapper, decoded.
  public var nested: ResumeData? { nestedStorage.first }

  /// The size in bytes of the blob as it was read.
  public var originalCount: Int { original.count }

  /// For a blob whose bytes were written on first use, whether their length lies within the bounds
  /// the conversion gave it; nil for any other blob.
  var originalLengthIsWithinBounds: Bool? { original.lengthIsWithinBounds }

  /// Whether the blob is smaller than any that carries a request archive (`tinyBlobSize`), found
  /// without writing the XML of a converted blob when its length is surely larger.
  var isTiny: Bool { original.isShorter(than: Self.tinyBlobSize) }

  /// Reads a resume blob of any generation.
  ///
  /// - Throws: ``ResumeDataError``: `.propertyList` with the container's offset or line,
  ///   `.keyedArchive` with the archive's key path, `.notResumeData` when it is neither.
  ///
  /// A binary keyed blob whose root dictionary holds only plain values, as CFNetwork writes them,
  /// is read in place: its values and request archives are read straight from the bytes, and the
  /// archive is decoded on first use of `archive`. So is a Network.framework blob whose root object
  /// holds the shapes `KeyedArchiveView.archivedAsRoot` writes: its requests and response are
  /// archived on their own straight from the bytes, and `networkFrameworkInfo` is decoded on first
  /// use. Anything else, errors included, takes the eager path, with the same result.
  public init(decoding data: Data, limits: KeyedArchiveLimits = .default) throws {
    try self.init(decodingAlone: data, limits: limits)
    refreshRequests()
  }

  /// `init(decoding:limits:)` of a blob made from `source` (a conversion), whose decoded requests
  /// serve for the request archives it carries over unchanged (see `refreshRequests`).
  init(decoding data: Data, limits: KeyedArchiveLimits = .default, requestsOf source: ResumeData)
    throws
  {
    try self.init(decodingAlone: data, limits: limits)
    refreshRequests(reusing: source)
  }

  // `init(decoding:limits:)` but for its requests, which the caller decodes.
  init(decodingAlone data: Data, limits: KeyedArchiveLimits) throws {
    // Initialized in place by delegation: assigning a blob made elsewhere to `self` copies it,
    // retaining each of its references.
    if let network = Self.networkFrameworkInPlace(data, limits: limits) {
      self.init(networkFramework: network, data: data, limits: limits)
    } else if let parts = Self.inPlaceParts(data, limits: limits) {
      self.init(inPlace: parts, data: data, limits: limits)
    } else {
      try self.init(parsing: data, limits: limits)
    }
  }

  /// Reads a blob on the eager path only (its archive and request archives decoded in full), for
  /// comparing the two paths.
  ///
  /// - Throws: what `init(decoding:limits:)` throws.
  @_spi(Differential)
  public init(decodingEagerly data: Data, limits: KeyedArchiveLimits = .default) throws {
    self = try ResumeData(parsing: data, limits: limits)
    refreshRequests(eagerly: true)
  }

  /// Whether this blob was read in place and its archive has not been decoded yet (for tests that
  /// compare the two paths).
  @_spi(Differential)
  public var isReadInPlace: Bool { archiveStorage?.isPending ?? false }

  /// What reading a keyed blob in place found, before it becomes a blob.
  private struct InPlaceParts {
    var view: KeyedArchiveView
    var mutable: Bool
    var keysAreKnown: Bool
    var plain: PropertyListDictionary
    var order: [String]
    var rootKeys: ArchiveRootKeys
  }

  /// A keyed blob's parts read in place, or nil when the eager path must read it: anything but a
  /// binary keyed archive that `KeyedArchiveView` reads whose root is a dictionary of plain values,
  /// or anything the eager path would refuse.
  private static func inPlaceParts(_ data: Data, limits: KeyedArchiveLimits) -> InPlaceParts? {
    guard !NetworkFrameworkMask.isMasked(data),
      let view = KeyedArchiveView(data, limits: limits.propertyList),
      view.hasArchiver,
      // Keys beside `$objects` (WebKit's bookmark data) are kept by the eager path's archive.
      view.hasNoExtraTopLevelKeys,
      let root = view.plainRootDictionary(limits: limits, knownKeys: ResumeDataKey.allKnown),
      // A key twice (nothing CFNetwork writes) is left to the eager path.
      let split = Self.splitPlain(root.entries, distinct: root.knownAndDistinct),
      root.knownAndDistinct && !root.entries.isEmpty || Self.holdsResumeKeys(split.plain)
    else { return nil }
    // WebKit's wrapper holds a blob of its own, read on the eager path.
    if case .data(let inner)? = split.plain["data"], split.plain[ResumeDataKey.localPath] != nil,
      NetworkFrameworkMask.isMasked(inner)
    {
      return nil
    }
    return InPlaceParts(
      view: view, mutable: root.mutable, keysAreKnown: root.keysAreKnown, plain: split.plain,
      order: split.order, rootKeys: view.rootKeys)
  }

  /// A keyed blob from the parts `inPlaceParts` read; its archive is decoded on first use.
  private init(inPlace parts: consuming InPlaceParts, data: Data, limits: KeyedArchiveLimits) {
    original = BlobBytes(data)
    archiveStorage = LazyKeyedArchive(
      bytes: data, recipe: .propertyList(limits.propertyList), view: parts.view.plist)
    let isSafari = Self.isSafariShaped(parts.plain)
    entries = parts.plain
    // Only roots of plain values are read in place.
    archivedEntries = [:]
    rootKeyOrder = parts.order
    rootIsMutable = parts.mutable
    ownRootKeys = parts.rootKeys
    entryKeysAreKnown = Unequated(parts.keysAreKnown)
    networkFramework = Unequated(nil)
    container = .keyedArchive
    generation = isSafari ? .safari : .keyed
    nestedStorage = []
  }

  /// A Network.framework blob's unmasked archive and root parts read in place, or nil when the
  /// eager path must read it: anything but a binary archive that `KeyedArchiveView` reads whose
  /// root is an `NWURLSession…` object that `KeyedArchiveView.archivedAsRoot` can write (which
  /// decoding it then succeeds on), or limits below those the two paths are compared under.
  private static func networkFrameworkInPlace(_ data: Data, limits: KeyedArchiveLimits) -> (
    unmasked: Data, parts: NetworkFrameworkParts, rootKeys: ArchiveRootKeys
  )? {
    // The writer from the bytes follows at most 10,000 objects 64 deep: far below these, the
    // fuzz targets' limits, under which its acceptance implies the decoder's.
    guard NetworkFrameworkMask.isMasked(data), limits.effectiveMaximumDepth >= 256,
      limits.maximumVisits >= 100_000
    else { return nil }
    let unmasked = NetworkFrameworkMask.toggled(data)
    guard let view = KeyedArchiveView(unmasked, limits: limits.propertyList),
      view.rootUID != 0,
      let classUID = view.classUID(ofInstance: view.object(view.rootUID)),
      view.mostDerivedClassName(classUID, hasPrefix: "NWURLSession"),
      let parts = NetworkFrameworkParts(view: view)
    else { return nil }
    return (unmasked, parts, view.rootKeys)
  }

  /// A Network.framework blob from what `networkFrameworkInPlace` read; its archive and root
  /// object are decoded on first use.
  private init(
    networkFramework network:
      consuming (
        unmasked: Data, parts: NetworkFrameworkParts, rootKeys: ArchiveRootKeys
      ), data: Data, limits: KeyedArchiveLimits
  ) {
    original = BlobBytes(data)
    let storage = LazyKeyedArchive(bytes: network.unmasked, recipe: .decoding(limits))
    archiveStorage = storage
    networkFramework = Unequated(
      NetworkFrameworkRoot(parts: network.parts, archive: storage, limits: limits))
    generation = .networkFramework
    container = .nwArchive
    ownRootKeys = network.rootKeys
    entries = [:]
    archivedEntries = [:]
    nestedStorage = []
  }

  private init(parsing data: Data, limits: KeyedArchiveLimits) throws {
    original = BlobBytes(data)
    if NetworkFrameworkMask.isMasked(data) {
      let archive = try Self.archive(NetworkFrameworkMask.toggled(data), limits: limits)
      let info = try Self.networkFrameworkRoot(archive, limits: limits)
      generation = .networkFramework
      container = .nwArchive
      ownRootKeys = archive.rootKeys
      entries = [:]
      archivedEntries = [:]
      let storage = LazyKeyedArchive(archive)
      archiveStorage = storage
      networkFramework = Unequated(
        NetworkFrameworkRoot(info: info, archive: storage, limits: limits))
      nestedStorage = []
      return
    }
    let decoded: (value: PropertyListValue, format: PropertyListFormat)
    do {
      decoded = try PropertyListValue.decode(data, limits: limits.propertyList)
    } catch let error as PropertyListError {
      throw ResumeDataError(.propertyList, error.message, at: "", propertyListError: error)
    }
    guard case .dictionary(let top) = decoded.value else {
      throw ResumeDataError(
        .notResumeData, "the top level is a \(decoded.value.typeName), not a dictionary", at: "")
    }
    if top["$archiver"] != nil,
      let keyed = try Self.keyed(decoded.value, format: decoded.format, top: top, limits: limits)
    {
      guard
        Self.holdsResumeKeys(keyed.plain)
          || keyed.archived.keys.contains(where: ResumeDataKey.isKnown)
      else {
        throw ResumeDataError(
          .notResumeData, "the archive's root dictionary holds none of the resume-data keys",
          at: "$top.\(keyed.archive.rootKey)")
      }
      archiveStorage = LazyKeyedArchive(keyed.archive)
      entries = keyed.plain
      archivedEntries = keyed.archived
      rootKeyOrder = keyed.order
      rootIsMutable = keyed.mutable
      ownRootKeys = keyed.archive.rootKeys
      networkFramework = Unequated(nil)
      container = decoded.format == .xml ? .keyedArchiveXML : .keyedArchive
      // WebKit wraps a Network.framework blob, and only that: anything else under `data` stays a
      // plain value, so that nesting can never recurse.
      if case .data(let inner)? = keyed.plain["data"], keyed.plain[ResumeDataKey.localPath] != nil,
        NetworkFrameworkMask.isMasked(inner)
      {
        generation = .networkFrameworkWebKit
        nestedStorage = [try ResumeData(decoding: inner, limits: limits)]
      } else {
        let isSafari = Self.isSafariShaped(keyed.plain)
        generation = isSafari ? .safari : .keyed
        nestedStorage = []
      }
      return
    }
    guard Self.holdsResumeKeys(top) else {
      throw ResumeDataError(
        .notResumeData,
        "the dictionary holds none of the resume-data keys (keys: \(top.keys.prefix(8).joined(separator: ", ")))",
        at: "")
    }
    entries = top
    archivedEntries = [:]
    archiveStorage = nil
    networkFramework = Unequated(nil)
    nestedStorage = []
    container = decoded.format == .xml ? .xmlPlist : .binaryPlist
    generation = Self.plainGeneration(top)
  }

  /// The plain blob `init(decoding:)` reads from the XML that `dictionary` is written as, made
  /// without reading the XML back (nor, unless `data` is given, writing it: its bytes are written
  /// on first use); nil when that could differ, and the bytes must be written and read.
  ///
  /// Reading it back gives the dictionary with every dictionary's keys in the order the writer
  /// sorts them, as long as each value is one the XML carries exactly (`carriedExactlyByXML`) and
  /// the reader's limits are far off; the dictionary must hold a resume-data key, as a plain blob
  /// does. Converting to v1, v2 or v4 read its own output back, which cost a v2 conversion a
  /// sixth of a record.
  init?(
    xmlOf dictionary: PropertyListDictionary, written data: Data? = nil,
    limits: PropertyListLimits, requestsOf source: ResumeData
  ) {
    var budget = (
      objects: limits.maximumObjectCount / 2, longestValue: limits.maximumValueLength / 2
    )
    // The declaration, the DOCTYPE and the `plist` element's tags (172 bytes) lie outside the
    // values, and only the upper bound counts them: the lower one is then lower still.
    var bounds = BlobBytes.WritableXML(lowerBound: 0, upperBound: 256)
    guard Self.holdsResumeKeys(dictionary),
      let sorted = Self.carriedExactlyByXML(
        .dictionary(dictionary), depth: min(limits.maximumDepth / 2, 64), budget: &budget,
        bounds: &bounds),
      case .dictionary(let top) = sorted,
      (data?.count ?? bounds.upperBound) <= limits.maximumInputSize / 2
    else { return nil }
    original = data.map(BlobBytes.init) ?? BlobBytes(xmlOf: top, writable: bounds)
    entries = top
    archivedEntries = [:]
    archiveStorage = nil
    networkFramework = Unequated(nil)
    nestedStorage = []
    container = .xmlPlist
    generation = Self.plainGeneration(top)
    refreshRequests(reusing: source)
  }

  /// The keyed blob `init(decoding:)` reads from `data`, the binary archive that `keyedBytes`
  /// just wrote of `dictionary` as a mutable root, made without reading it back; nil when that
  /// could differ, and the bytes must be read.
  ///
  /// Reading it back takes the in-place path and gives the dictionary as it is, as long as every
  /// value is a string, number, boolean or data (what a root of plain values reads back as), the
  /// dictionary holds a resume-data key and no WebKit wrapper's blob, and the reader's limits are
  /// far off. A conversion to keyed read its own output back, which cost a Network.framework
  /// conversion a sixteenth of a record.
  init?(
    writtenAsKeyed dictionary: PropertyListDictionary, data: Data, limits: PropertyListLimits,
    requestsOf source: ResumeData
  ) {
    guard data.count <= limits.maximumInputSize / 2, data.count <= limits.maximumValueLength / 2,
      dictionary.count <= limits.maximumObjectCount / 4, Self.holdsResumeKeys(dictionary),
      !NetworkFrameworkMask.isMasked(data),
      dictionary.entriesSatisfy({ _, value in
        switch value {
        case .string, .integer, .real, .boolean, .data: true
        default: false
        }
      })
    else { return nil }
    if case .data(let inner)? = dictionary["data"], NetworkFrameworkMask.isMasked(inner) {
      return nil
    }
    original = BlobBytes(data)
    archiveStorage = LazyKeyedArchive(writtenBytes: data, limits: limits)
    entries = dictionary
    archivedEntries = [:]
    rootKeyOrder = dictionary.keys
    rootIsMutable = true
    // Written by `keyedBytes`, under the key Apple's decoder reads.
    ownRootKeys = .rootObjectKey
    networkFramework = Unequated(nil)
    container = .keyedArchive
    let isSafari = Self.isSafariShaped(dictionary)
    generation = isSafari ? .safari : .keyed
    nestedStorage = []
    refreshRequests(reusing: source)
  }

  /// `value` as the XML reader reads it back from the writer's XML (its dictionaries' keys
  /// sorted), or nil unless that is certain: strings of printable ASCII, tabs and line breaks
  /// only, integers, booleans, data, and arrays and dictionaries of them, no dictionary with a
  /// `CF$UID` key (read back as a UID), within `depth` levels and the budget. The writer takes
  /// every such value; `bounds` grows by the bounds of the length of its XML (`value` written at
  /// `depth` levels from the limit, 64 at most: at most 64 tabs before each line).
  private static func carriedExactlyByXML(
    _ value: PropertyListValue, depth: Int, budget: inout (objects: Int, longestValue: Int),
    bounds: inout BlobBytes.WritableXML
  ) -> PropertyListValue? {
    budget.objects -= 1
    guard budget.objects >= 0, depth >= 0 else { return nil }
    // A line of the value's own: its tabs, its tags (`<string>`, `</string>\n` and the like are
    // at most 20 bytes), and what the element holds, at most five bytes a byte when escaped.
    let line = (lower: 8, upper: 64 + 20)
    bounds.lowerBound += line.lower
    bounds.upperBound += line.upper
    func plainText(_ text: String) -> Bool {
      let count = text.utf8.count
      guard count <= budget.longestValue else { return false }
      bounds.lowerBound += count
      bounds.upperBound += 5 * count
      return text.withUTF8InPlace {
        XMLPropertyListWriter.isPlainText(UnsafeRawBufferPointer($0))
      }
    }
    switch value {
    case .string(let text):
      return plainText(text) ? value : nil
    case .integer, .boolean:
      // At most 20 digits and a sign.
      bounds.upperBound += 21
      return value
    case .data(let bytes):
      guard bytes.count <= budget.longestValue else { return nil }
      // Base64 is four characters for three bytes; lines of at least 12 characters, each with at
      // most 9 bytes of tabs and line break, and the closing tag on a line of its own.
      let text = (bytes.count + 2) / 3 * 4
      bounds.lowerBound += text
      bounds.upperBound += text + (text / 12 + 1) * 9 + line.upper
      return value
    case .array(let elements):
      bounds.upperBound += line.upper
      var read: [PropertyListValue] = []
      read.reserveCapacity(elements.count)
      for element in elements {
        guard
          let element = carriedExactlyByXML(
            element, depth: depth - 1, budget: &budget, bounds: &bounds)
        else { return nil }
        read.append(element)
      }
      return .array(read)
    case .dictionary(let dictionary):
      bounds.upperBound += line.upper
      var read: [PropertyListDictionary.Element] = []
      read.reserveCapacity(dictionary.count)
      for (key, element) in dictionary.sortedEntries {
        // The key's own line.
        bounds.lowerBound += line.lower
        bounds.upperBound += line.upper
        guard key != "CF$UID", plainText(key),
          let element = carriedExactlyByXML(
            element, depth: depth - 1, budget: &budget, bounds: &bounds)
        else { return nil }
        read.append((key, element))
      }
      return .dictionary(PropertyListDictionary(uniqueKeys: read))
    case .date, .real, .uid:
      return nil
    }
  }

  // MARK: Typed fields

  private func string(_ key: String) -> String? { entries[key]?.stringValue }
  private func data(_ key: String) -> Data? { entries[key]?.dataValue }

  /// `NSURLSessionResumeInfoVersion`.
  public var infoVersion: Int? { entries[ResumeDataKey.infoVersion]?.int64Value.map { Int($0) } }
  /// `NSURLSessionDownloadURL`, or for Network.framework blobs the current request's URL.
  public var downloadURL: String? {
    if let url = string(ResumeDataKey.downloadURL) { return url }
    return currentRequest?.url ?? nested?.downloadURL
  }
  /// `NSURLSessionResumeBytesReceived`.
  public var bytesReceived: Int64? { entries[ResumeDataKey.bytesReceived]?.int64Value }
  /// `NSURLSessionResumeEntityTag`: the raw ETag header; for Network.framework blobs, the ETag
  /// of the response they hold.
  public var entityTag: String? {
    string(ResumeDataKey.entityTag) ?? networkFrameworkHeader("ETag")
  }
  /// `NSURLSessionResumeServerDownloadDate`: the raw Last-Modified header; for Network.framework
  /// blobs, the Last-Modified of the response they hold.
  public var serverDownloadDate: String? {
    string(ResumeDataKey.serverDownloadDate) ?? networkFrameworkHeader("Last-Modified")
  }

  /// A header of a Network.framework blob's response (its validators live only there).
  private func networkFrameworkHeader(_ name: String) -> String? {
    guard isNetworkFramework || nested != nil else { return nil }
    if let index = NetworkFrameworkParts.validatorNames.firstIndex(of: name) {
      return networkFrameworkValidators[index]
    }
    return response?.headerFields?.first {
      HTTPFieldName.equal($0.name, name)
    }?.value
  }

  /// The values of the response's header fields named `NetworkFrameworkParts.validatorNames` (nil
  /// for each it does not hold): read with a Network.framework blob's parts in place when they
  /// were, else from the decoded response.
  var networkFrameworkValidators: [String?] {
    if let values = inPlaceResponseValidators { return values }
    let headers = response?.headerFields
    return NetworkFrameworkParts.validatorNames.map { name in
      headers?.first { HTTPFieldName.equal($0.name, name) }?.value
    }
  }

  // The validators read in place, when the response they come from is the Network.framework
  // blob's (here or in WebKit's wrapper), as `response` picks it.
  private var inPlaceResponseValidators: [String?]? {
    guard data(ResumeDataKey.response) == nil else { return nil }
    if let network = networkFramework.value { return network.parts.responseValidators }
    return nested?.inPlaceResponseValidators
  }
  /// `NSURLSessionResumeInfoTempFileName`, or a Network.framework blob's `tempFileName`.
  public var tempFileName: String? {
    if let name = string(ResumeDataKey.tempFileName) { return name }
    if let name = networkFramework.value?.parts.tempFileName { return name }
    return nested?.tempFileName
  }
  /// `NSURLSessionResumeInfoLocalPath`, or a Network.framework blob's `fileURL`.
  public var localPath: String? {
    if let path = string(ResumeDataKey.localPath) { return path }
    return networkFramework.value?.parts.fileURL
  }
  /// `ResumeDataKitSegments`: the segment map of a segmented download of this toolkit's (which
  /// bytes of the partial file are on disk), as text.
  public var segments: String? { string(ResumeDataKey.segments) }

  /// The segment map `segments` holds, if the blob has one.
  ///
  /// - Throws: ``ResumeDataError`` with `.invalidValue` when it does not read.
  public func segmentMap() throws(ResumeDataError) -> SegmentMap? {
    guard let segments else { return nil }
    return try SegmentMap(parsing: segments)
  }
  /// `NSURLSessionResumeByteRange`.
  public var byteRange: String? { string(ResumeDataKey.byteRange) }

  /// The current request, decoded (from its archive, from the Network.framework object, or from
  /// the blob WebKit's wrapper holds).
  public var currentRequest: URLRequestArchive? {
    decodedCurrentRequest ?? nested?.currentRequest
  }
  /// The original request, decoded.
  public var originalRequest: URLRequestArchive? {
    decodedOriginalRequest ?? nested?.originalRequest
  }

  /// Decodes the requests of a blob made from `source` (a conversion), which mostly carries its
  /// request archives over unchanged: the same bytes decode to the same value, so `source`'s
  /// decoded requests serve.
  ///
  /// `source` is not optional: a blob passed as an optional is copied into it, retaining each of
  /// its references.
  mutating func refreshRequests(reusing source: ResumeData) {
    let currentBytes = requestBytes(0)
    let originalBytes = requestBytes(1)
    // Each looked up once.
    let sourceBytes = (source.requestBytes(0), source.requestBytes(1))
    // The request `source` decoded from these bytes (an absent request's being none); nil when
    // it decoded none from them.
    func reused(_ bytes: Data?) -> URLRequestArchive?? {
      guard let bytes else { return .some(nil) }
      if let decoded = source.decodedCurrentRequest, sourceBytes.0 == bytes { return decoded }
      if let decoded = source.decodedOriginalRequest, sourceBytes.1 == bytes { return decoded }
      return nil
    }
    if let current = reused(currentBytes), let original = reused(originalBytes) {
      (decodedCurrentRequest, decodedOriginalRequest) = (current, original)
      return
    }
    refreshRequests(currentBytes, originalBytes, eagerly: false)
  }

  /// Decodes the requests again after an edit.
  ///
  /// - Parameter eagerly: decode the request archives in full rather than read them in place.
  mutating func refreshRequests(eagerly: Bool = false) {
    refreshRequests(requestBytes(0), requestBytes(1), eagerly: eagerly)
  }

  private mutating func refreshRequests(
    _ currentBytes: Data?, _ originalBytes: Data?, eagerly: Bool
  ) {
    // A Network.framework blob read in place has its requests read already, from the views its
    // writer made of their archives.
    let written = eagerly ? nil : networkFramework.value?.parts.writtenRequests
    decodedCurrentRequest = written?.current ?? request(currentBytes, eagerly: eagerly)
    // A blob often archives one request twice (no redirect, or a repair that filled one from the
    // other): the same bytes decode to the same value, so the second decoding is skipped.
    if let currentBytes, currentBytes == originalBytes {
      decodedOriginalRequest = decodedCurrentRequest
    } else {
      decodedOriginalRequest = written?.original ?? request(originalBytes, eagerly: eagerly)
    }
  }

  /// The archive of the current (0) or original (1) request: the blob's entry, or a
  /// Network.framework blob's request object archived on its own.
  func requestBytes(_ index: Int) -> Data? {
    if let network = networkFramework.value { return network.parts.request(index).bytes }
    return data(Self.requestKeys[index])
  }

  private func request(_ bytes: Data?, eagerly: Bool) -> URLRequestArchive? {
    guard let bytes else { return nil }
    if eagerly { return try? URLRequestArchive(archive: KeyedArchive(decoding: bytes)) }
    return try? URLRequestArchive(decoding: bytes)
  }

  /// The archived response (`NSURLSessionResumeResponse`, or a Network.framework blob's
  /// `response` object archived on its own), decoded.
  public var response: URLResponseArchive? {
    if let bytes = data(ResumeDataKey.response) ?? networkFramework.value?.parts.response.bytes {
      return try? URLResponseArchive(decoding: bytes)
    }
    return nested?.response
  }

  /// A Network.framework blob's root parts (nil for other blobs).
  var networkFrameworkParts: NetworkFrameworkParts? { networkFramework.value?.parts }

  /// Whether `unknownKeys` is not empty, found without building it.
  var hasUnknownKeys: Bool {
    if entryKeysAreKnown.value, archivedEntries.isEmpty { return false }
    if generation == .networkFrameworkWebKit { return !unknownKeys.isEmpty }
    return !entries.entriesSatisfy { key, _ in ResumeDataKey.isKnown(key) }
      || archivedEntries.keys.contains { !ResumeDataKey.isKnown($0) }
  }

  /// Keys of the resume dictionary this library gives no meaning to, in stored order.
  public var unknownKeys: [String] {
    // One pass, building nothing for the usual blob, which has none.
    var keys = [String]()
    for entry in entries.entries where !ResumeDataKey.isKnown(entry.key) {
      keys.append(entry.key)
    }
    if !archivedEntries.isEmpty {
      keys += archivedEntries.keys.filter { !ResumeDataKey.isKnown($0) }.sorted()
    }
    if generation == .networkFrameworkWebKit { keys.removeAll { $0 == "data" } }
    return keys
  }

  // MARK: Encoding

  /// The blob in its own generation and container, written as CoreFoundation and NSKeyedArchiver
  /// write it: an untouched blob in that canonical form (every fixture, and everything this
  /// toolkit writes) comes back as the bytes it was read from; one written by another writer comes
  /// back as the same values in canonical form.
  ///
  /// - Throws: ``ResumeDataError`` if a value cannot be written.
  public func encoded() throws -> Data {
    try encoded(keepingUntouchedBytes: false)
  }

  /// The blob's bytes to write out. With `keepingUntouchedBytes`, a blob that nothing has changed
  /// since it was read (no edit, no repair rule, no conversion) is the bytes it was read from, even
  /// when another writer laid them out differently from `encoded()`: what repairing a healthy blob
  /// should give back. A changed blob, or any blob without the flag, is `encoded()`. A converted
  /// blob was read from what the conversion wrote, so it is that either way.
  ///
  /// - Throws: ``ResumeDataError`` if a value cannot be written.
  public func encoded(keepingUntouchedBytes: Bool) throws -> Data {
    if keepingUntouchedBytes, !isEdited { return original.data }
    if isEdited { return try rebuilt() }
    do {
      switch container {
      case .xmlPlist: return try PropertyListValue.dictionary(entries).encoded(as: .xml)
      case .binaryPlist:
        // The object table keeps the producer's sharing; a file whose unreferenced objects do not
        // read (nothing Apple writes) is written afresh in CoreFoundation's layout instead.
        if let table = try? BinaryPropertyListObjectTable(reading: original.data) {
          return table.encoded()
        }
        return try PropertyListValue.dictionary(entries).encoded(as: .binary)
      // A blob read in place is not decoded when its bytes are already its encoding.
      case .keyedArchive, .keyedArchiveXML: return try archiveStorage?.encoded() ?? original.data
      case .nwArchive:
        return NetworkFrameworkMask.toggled(try archive?.encoded(as: .binary) ?? original.data)
      }
    } catch let error as PropertyListError {
      throw ResumeDataError(.propertyList, error.message, at: "", propertyListError: error)
    } catch let error as KeyedArchiveError {
      throw ResumeDataError(
        .keyedArchive, error.message, at: error.keyPath, keyedArchiveError: error)
    }
  }
}

/// A value that takes no part in equality or hashing: what a reader found out in passing, kept to
/// save finding it again.
struct Unequated<Value: Sendable>: Sendable, Hashable {
  var value: Value

  init(_ value: Value) { self.value = value }

  static func == (lhs: Self, rhs: Self) -> Bool { true }
  func hash(into hasher: inout Hasher) {}
}

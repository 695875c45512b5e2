import KeyedArchive
import PortableFoundation
import PropertyList

extension ResumeData {
  /// Network.framework's resume-info classes, most derived first (format reference §7).
  static let networkFrameworkClasses = [
    "NWURLSessionDownloadResumeInfo", "NWURLSessionResumeInfo", "NSObject",
  ]

  /// The blob in another generation (and container), keeping everything the target can carry.
  ///
  /// Plain generations (v1, v2, v4) and the keyed ones (keyed, Safari-made) carry the same
  /// dictionary, with the partial file named as each expects: `LocalPath` for v1 and Safari,
  /// `TempFileName` for v2, v4 and keyed (derived from one another, the directory coming from
  /// `temporaryDirectory`). Values only an archive can hold survive only into keyed targets, and
  /// so does WebKit's `ResumePlaceholderURLBookmarkData` beside `$objects`. Network.framework's
  /// object carries the requests, the response and the partial file, but no byte count; it keeps
  /// its validators in the response, which is made (an `NSHTTPURLResponse` with the ETag and
  /// Last-Modified header fields) when the blob has none. Request archives in the `$N` layout go
  /// back to the standard one unless the target is v1 or v2, which iOS 10.0–10.1 reads.
  /// Every archive is written under the `$top` key Apple's decoder for it reads
  /// (`rootKey(of:)`).
  ///
  /// - Parameters:
  ///   - target: the generation to write.
  ///   - format: `.xml` or `.binary`; nil for the target's usual one (XML for plain dictionaries,
  ///     binary for archives). Network.framework blobs are binary only (in WebKit's wrapper,
  ///     the wrapper can be XML).
  ///   - infoVersion: the `NSURLSessionResumeInfoVersion` of a keyed target (default 5); plain
  ///     targets always get their own (1, 2 or 4).
  ///   - temporaryDirectory: where the partial file lives, to turn a bare temp name into a path.
  /// - Returns: the converted blob, and findings: `converted`, plus `conversion-derived` for each
  ///   value made from another and `conversion-dropped` for each value the target cannot carry.
  /// - Throws: ``ResumeDataError``: `.unsupported` when the target needs what the blob cannot give
  ///   (a partial-file path without a directory, a validator for Network.framework) or cannot
  ///   carry what the blob must keep (a segment map, into Network.framework's form), or a request
  ///   archive's error.
  public func converted(
    to target: ResumeDataGeneration, format: PropertyListFormat? = nil, infoVersion: Int? = nil,
    temporaryDirectory: URL? = nil
  ) throws -> (blob: ResumeData, findings: [Finding]) {
    // A blob already in the target's form comes back as it is, with nothing to say.
    guard
      let conversion = try convertedQuietly(
        to: target, format: format, infoVersion: infoVersion,
        temporaryDirectory: temporaryDirectory)
    else { return (self, []) }
    let blob = conversion.blob
    var parts = [
      "converted from ", generation.rawValue, " (", container.rawValue, ") to ",
      blob.generation.rawValue, " (", blob.container.rawValue, ")",
    ]
    if let version = blob.infoVersion { parts += [", info version ", String(version)] }
    return (blob, [Finding("converted", .info, Finding.message(parts))] + conversion.findings)
  }

  /// `converted(to:…)` without its `converted` finding (the conversion rule says it its own way),
  /// or nil when the blob is in the target's form already.
  func convertedQuietly(
    to target: ResumeDataGeneration, format: PropertyListFormat? = nil, infoVersion: Int? = nil,
    temporaryDirectory: URL? = nil
  ) throws -> (blob: ResumeData, findings: [Finding])? {
    if target == .networkFramework, format == .xml {
      throw ResumeDataError(
        .unsupported, "Network.framework blobs are binary archives; XML is not a form of them",
        at: "")
    }
    // Network.framework's object has no place for the segment map, and without it the partial
    // file (allocated to the whole length) would pass for complete.
    if target == .networkFramework || target == .networkFrameworkWebKit, segments != nil,
      (try? segmentMap())??.isComplete != true
    {
      throw ResumeDataError(
        .unsupported,
        "the blob is of a download over several connections, whose segment map Network.framework's form cannot carry: resume it with this toolkit, or truncate its partial file to BytesReceived and remove the map first",
        at: ResumeDataKey.segments)
    }
    let plainTargets: [ResumeDataGeneration] = [.v1, .v2, .v4]
    let wantedContainer: ResumeDataContainer =
      switch target {
      case .v1, .v2, .v4: format == .binary ? .binaryPlist : .xmlPlist
      case .networkFramework: .nwArchive
      default: format == .xml ? .keyedArchiveXML : .keyedArchive
      }
    let keepsDollarLayout = target == .v1 || target == .v2
    let wantedVersion =
      switch target {
      case .v1: 1
      case .v2: 2
      case .v4: 4
      case .keyed: infoVersion ?? (generation == .keyed ? self.infoVersion ?? 5 : 5)
      // Safari writes a constant; 4 unless the blob already is Safari's own.
      case .safari: generation == .safari ? self.infoVersion ?? 4 : 4
      default: self.infoVersion ?? 0
      }
    if target == generation, wantedContainer == container,
      target == .networkFramework || target == .networkFrameworkWebKit
        || self.infoVersion == wantedVersion
    {
      // In the target's form already: only what an Apple system would not read changes (a root
      // under the other key, requests in a layout the form's readers do not read).
      var restored = self
      let changes = try restored.restoringAppleForms()
      guard !changes.isEmpty else { return nil }
      // Read back, so that the blob is its bytes (its archive the one written, not the one read).
      return (try ResumeData(decoding: try restored.encoded(), requestsOf: restored), changes)
    }
    var notes = Conversion(directory: temporaryDirectory)
    var dictionary = try notes.portableEntries(self)
    try notes.placeRequests(&dictionary, of: self, keepingDollarLayout: keepsDollarLayout)
    // A Network.framework blob's response is archived on its own under root as it is read.
    if generation != .networkFramework, generation != .networkFrameworkWebKit {
      try notes.placeResponse(&dictionary)
    }
    // Nil when the blob is known without its bytes, which it writes when first asked for.
    let bytes: Data?
    // The blob the bytes are, when it is known without reading them back.
    var written: ResumeData?
    switch target {
    case .v1, .v2, .v4, .keyed, .safari:
      dictionary[ResumeDataKey.infoVersion] = .integer(PropertyListInteger(wantedVersion))
      switch target {
      case .v1, .safari:
        try notes.nameByLocalPath(&dictionary)
        if target == .safari { notes.drop(ResumeDataKey.originalRequest, from: &dictionary) }
      default:
        try notes.nameByTempFileName(&dictionary)
        if plainTargets.contains(target) {
          notes.drop(ResumeDataKey.localPath, from: &dictionary)
        }
      }
      if target == .v1 || target == .v2 {
        notes.drop(ResumeDataKey.byteRange, from: &dictionary)
      }
      if plainTargets.contains(target) {
        let archivedKeys = notes.archivedOrder(self)
        for key in archivedKeys { notes.dropped.append(key) }
        // In the envelope, beside `$objects`: a root dictionary's own goes with its entries.
        if envelopeBookmarkData != nil { notes.dropped.append(Self.placeholderBookmarkKey) }
        let container: PropertyListFormat = wantedContainer == .binaryPlist ? .binary : .xml
        let limits = KeyedArchiveLimits.default.propertyList
        if container == .xml,
          let blob = ResumeData(xmlOf: dictionary, limits: limits, requestsOf: self)
        {
          bytes = nil
          written = blob
        } else {
          bytes = try ResumeDataError.wrapping {
            try PropertyListValue.dictionary(dictionary).encoded(as: container)
          }
        }
      } else {
        let pairs = notes.keyedPairs(dictionary, of: self)
        // WebKit's keys beside `$objects` go with a keyed dictionary's archive.
        let envelope = envelopeKept
        let keyed = try ResumeDataError.wrapping {
          try Self.keyedBytes(
            pairs, like: envelope, format: wantedContainer == .keyedArchiveXML ? .xml : .binary)
        }
        bytes = keyed
        // Every pair from the dictionary: no archived value of the source's joins them.
        if wantedContainer == .keyedArchive, pairs.count == dictionary.count, envelope == nil {
          written = ResumeData(
            writtenAsKeyed: dictionary, data: keyed,
            limits: KeyedArchiveLimits.default.propertyList, requestsOf: self)
        }
      }
    case .networkFramework:
      if envelopeBookmarkData != nil { notes.dropped.append(Self.placeholderBookmarkKey) }
      bytes = try notes.networkFrameworkBytes(dictionary, of: self)
    case .networkFrameworkWebKit:
      // The blob it wraps: this one, or the one it already wraps, in Network.framework's form.
      let inner =
        try convertedQuietly(to: .networkFramework, temporaryDirectory: temporaryDirectory)
        ?? (self, [])
      try notes.nameByLocalPath(&dictionary)
      guard let path = dictionary[ResumeDataKey.localPath] else {
        throw ResumeDataError(.unsupported, "no partial-file path", at: ResumeDataKey.localPath)
      }
      let pairs = [
        ArchivedDictionaryEntry(.string("data"), .data(try inner.blob.encoded())),
        ArchivedDictionaryEntry(.string(ResumeDataKey.localPath), Self.archived(path)),
      ]
      // What the inner conversion derived (a TempFileName from LocalPath, a response made for
      // the validators) is said once, as it said it; what it dropped, as this one's.
      for finding in inner.findings where !notes.derived.contains(finding) {
        if finding.code == "conversion-dropped" {
          notes.dropped.append(finding.path)
        } else {
          notes.derived.append(finding)
        }
      }
      let envelope = envelopeKept
      bytes = try ResumeDataError.wrapping {
        try Self.keyedBytes(
          pairs, like: envelope, format: wantedContainer == .keyedArchiveXML ? .xml : .binary)
      }
    }
    // Moved out of `written`, not copied.
    var blob = try (consume written) ?? ResumeData(decoding: bytes ?? Data(), requestsOf: self)
    blob.responseRootKeyIsKnown = Unequated(true)
    var findings = notes.derived
    var seen = Set<String>()
    for key in notes.dropped where !key.isEmpty && seen.insert(key).inserted {
      findings.append(
        Finding(
          "conversion-dropped", .warning,
          "\(key) cannot be carried by \(target.rawValue) and was left out", path: key))
    }
    return (blob, findings)
  }
}

/// The bookkeeping of one conversion: the source's values in a portable form, and what was derived
/// or dropped on the way.
///
/// The source is handed to the methods that read it rather than kept: a blob kept is a copy,
/// retaining each of its references.
private struct Conversion {
  let directory: URL?
  var derived: [Finding] = []
  var dropped: [String] = []

  init(directory: URL?) {
    self.directory = directory
  }

  /// Keys of values only an archive can hold, in the source's order.
  func archivedOrder(_ source: ResumeData) -> [String] {
    source.rootKeyOrder.filter { source.archivedEntries[$0] != nil }
  }

  /// The source as a resume dictionary of plain values, whatever its generation.
  mutating func portableEntries(_ source: ResumeData) throws -> PropertyListDictionary {
    switch source.generation {
    case .networkFramework:
      return try networkFrameworkEntries(source)
    case .networkFrameworkWebKit:
      guard let nested = source.nested else { return source.entries }
      var entries = try networkFrameworkEntries(nested)
      if let path = source.entries[ResumeDataKey.localPath] {
        entries[ResumeDataKey.localPath] = path
      }
      return entries
    default:
      return source.entries
    }
  }

  /// A Network.framework object's requests, response and partial file as resume-dictionary values.
  private mutating func networkFrameworkEntries(_ blob: ResumeData) throws
    -> PropertyListDictionary
  {
    guard let parts = blob.networkFrameworkParts else { return [:] }
    // Every key once, in this order: appended, rather than set one by one (each set looks for the
    // key first).
    var entries: [PropertyListDictionary.Element] = []
    entries.reserveCapacity(9)
    if let url = blob.currentRequest?.url ?? blob.originalRequest?.url {
      entries.append((ResumeDataKey.downloadURL, .string(url)))
    }
    // Each object archived on its own when the blob was read (from the archive's bytes where the
    // objects are of the shapes that writer follows, else from the decoded values: both give the
    // same bytes).
    func archived(_ object: NetworkFrameworkSubArchive) throws -> Data? {
      switch object {
      case .absent: return nil
      case .archived(let bytes): return bytes
      case .unencodable(let error): throw error
      }
    }
    for (index, key) in ResumeData.requestKeys.enumerated() {
      if let bytes = try archived(parts.request(index)) { entries.append((key, .data(bytes))) }
    }
    if let bytes = try archived(parts.response) {
      entries.append((ResumeDataKey.response, .data(bytes)))
      // The validators Network.framework keeps only in the response (read with the blob's parts
      // when it was read in place: the response archive is not decoded again).
      let values = blob.networkFrameworkValidators
      for (index, key) in [ResumeDataKey.entityTag, ResumeDataKey.serverDownloadDate].enumerated() {
        if let value = values[index] {
          entries.append((key, .string(value)))
          derived.append(
            Finding(
              "conversion-derived", .info,
              "\(key) taken from the response's \(NetworkFrameworkParts.validatorNames[index]) header",
              path: key))
        }
      }
    }
    let name = blob.tempFileName
    if let name { entries.append((ResumeDataKey.tempFileName, .string(name))) }
    if let path = blob.localPath {
      entries.append((ResumeDataKey.localPath, .string(ResumeData.plainPath(path))))
    }
    // Network.framework records no byte count: the partial file's size is the count.
    if let directory, let name, ResumeData.isSafeBareName(name),
      let size = ResumeData.fileSize(directory.appendingPathComponent(name))
    {
      entries.append((ResumeDataKey.bytesReceived, .integer(PropertyListInteger(size))))
      derived.append(
        Finding(
          "conversion-derived", .info,
          "BytesReceived set to the partial file's size, \(size)",
          path: ResumeDataKey.bytesReceived))
    }
    return PropertyListDictionary(uniqueKeys: entries)
  }

  /// Makes sure the partial file is named by an absolute `LocalPath`, and drops `TempFileName`.
  mutating func nameByLocalPath(_ entries: inout PropertyListDictionary) throws {
    if entries[ResumeDataKey.localPath]?.stringValue == nil {
      guard let name = entries[ResumeDataKey.tempFileName]?.stringValue,
        ResumeData.isSafeBareName(name)
      else {
        throw ResumeDataError(
          .unsupported, "there is no safe partial-file name to make a local path from",
          at: ResumeDataKey.tempFileName)
      }
      guard let directory else {
        throw ResumeDataError(
          .unsupported,
          "the target names the partial file by absolute path: give the directory that holds \(name)",
          at: ResumeDataKey.localPath)
      }
      let path = directory.appendingPathComponent(name).standardizedFileURL.path
      entries[ResumeDataKey.localPath] = .string(path)
      derived.append(
        Finding(
          "conversion-derived", .info, "LocalPath made from TempFileName: \(path)",
          path: ResumeDataKey.localPath))
    }
    if entries[ResumeDataKey.tempFileName] != nil {
      entries[ResumeDataKey.tempFileName] = nil
      derived.append(
        Finding(
          "conversion-derived", .info, "TempFileName replaced by LocalPath",
          path: ResumeDataKey.tempFileName))
    }
  }

  /// Makes sure the partial file is named by a bare `TempFileName` (from LocalPath's last
  /// component).
  mutating func nameByTempFileName(_ entries: inout PropertyListDictionary) throws {
    guard entries[ResumeDataKey.tempFileName]?.stringValue == nil else { return }
    guard let path = entries[ResumeDataKey.localPath]?.stringValue else {
      throw ResumeDataError(
        .unsupported, "the blob names no partial file (neither TempFileName nor LocalPath)",
        at: ResumeDataKey.tempFileName)
    }
    let name = URL(fileURLWithPath: path).lastPathComponent
    guard ResumeData.isSafeBareName(name) else {
      throw ResumeDataError(
        .unsupported, "the local path \(String(reflecting: path)) has no usable file name",
        at: ResumeDataKey.localPath)
    }
    entries[ResumeDataKey.tempFileName] = .string(name)
    derived.append(
      Finding(
        "conversion-derived", .info,
        "TempFileName made from LocalPath's last component: \(name) (the file must be in the temporary directory)",
        path: ResumeDataKey.tempFileName))
  }

  /// Puts the request archives of `entries` (the source's, carried over) in the standard layout
  /// under `NSKeyedArchiveRootObjectKey`, which every system but iOS 10.0–10.1 reads; with
  /// `keepingDollarLayout` (a v1 or v2 target, which that system reads), archives in the `$N`
  /// layout stay as they are, said in a finding. Told from the source's decoded requests, so
  /// that the usual blob costs no decoding.
  mutating func placeRequests(
    _ entries: inout PropertyListDictionary, of source: ResumeData, keepingDollarLayout: Bool
  ) throws {
    for (index, key) in ResumeData.requestKeys.enumerated() {
      guard let request = index == 0 ? source.currentRequest : source.originalRequest,
        !request.isInLayout(.standard), entries[key]?.dataValue != nil
      else { continue }
      if keepingDollarLayout, request.isInLayout(.dollarNumbered) {
        derived.append(
          Finding(
            "request-layout-kept", .info,
            "request archive kept in the $N layout under root, which iOS 10.0–10.1 reads back and later systems do not (repair for them restores the standard layout)",
            path: key))
        continue
      }
      // The source's decoded request is of these bytes: `portableEntries` carries its archive.
      let converted = try ResumeDataError.wrapping(at: key) {
        try request.encodedConverted(to: .standard)
      }
      entries[key] = .data(converted)
      derived.append(
        Finding(
          RestoreStandardRequestLayout().name, .info,
          request.layout == .standard
            ? "request archive's root moved under NSKeyedArchiveRootObjectKey, the key its layout is read under"
            : "request archive rewritten to the standard layout under NSKeyedArchiveRootObjectKey, which every system the target's form is read by decodes",
          path: key))
    }
  }

  /// Moves the root of the response archive of `entries` (the source's, carried over) under
  /// `root`, the key Apple reads it by, when it is not.
  mutating func placeResponse(_ entries: inout PropertyListDictionary) throws {
    guard let bytes = entries[ResumeDataKey.response]?.dataValue,
      let misplaced = ResumeData.misplacedResponseArchive(bytes)
    else { return }
    let key = ResumeData.rootKey(of: .responseArchive)
    entries[ResumeDataKey.response] = .data(
      try ResumeData.rekeyed(misplaced, to: key, at: ResumeDataKey.response))
    derived.append(
      Finding(
        RestoreArchiveRootKeys().name, .info,
        "the response archive's root moved from \(ResumeData.describe(misplaced.rootKeys)) to \(key.rawValue), the key Apple's decoder for it reads",
        path: ResumeDataKey.response))
  }

  /// Removes a key the target cannot carry, noting it.
  mutating func drop(_ key: String, from entries: inout PropertyListDictionary) {
    guard entries[key] != nil else { return }
    entries[key] = nil
    dropped.append(key)
  }

  /// A keyed root dictionary: the plain entries in the source's order, then archived values.
  func keyedPairs(_ entries: PropertyListDictionary, of source: ResumeData)
    -> [ArchivedDictionaryEntry]
  {
    var pairs = entries.map {
      ArchivedDictionaryEntry(.string($0.key), ResumeData.archived($0.value))
    }
    for key in archivedOrder(source) {
      if let value = source.archivedEntries[key] {
        pairs.append(ArchivedDictionaryEntry(.string(key), value))
      }
    }
    return pairs
  }

  /// The response a Network.framework blob made from `entries` holds: `response` (the source's,
  /// decoded) with the dictionary's ETag and Last-Modified among its header fields, since
  /// Network.framework keeps its validators nowhere else; made, when the source has none, as an
  /// `NSHTTPURLResponse` (status 200, the URL, those two header fields) in the field layout of
  /// `Fixtures/archive/response/synthetic-http-response.archive`, CFNetwork's own not being
  /// public.
  ///
  /// - Throws: ``ResumeDataError`` `.unsupported` when there is no validator at all: a blob
  ///   Network.framework's loader could resume from cannot be made.
  mutating func responseHoldingValidators(
    _ response: ArchivedValue?, _ entries: PropertyListDictionary, url: String?
  ) throws -> ArchivedValue {
    let names = NetworkFrameworkParts.validatorNames
    let wanted = [ResumeDataKey.entityTag, ResumeDataKey.serverDownloadDate].map {
      entries[$0]?.stringValue
    }
    var object: ArchivedObject
    // The field of the header dictionary, its entries and whether it is mutable.
    var headerField: Int?
    var headers: [ArchivedDictionaryEntry] = []
    var mutable = false
    let made: Bool
    if case .object(let existing)? = response {
      object = existing
      made = false
      for (index, field) in object.fields.enumerated()
      where field.key.lowercased().contains("header") {
        guard case .reference(.dictionary(let entries, let isMutable)) = field.value else {
          continue
        }
        (headerField, headers, mutable) = (index, entries, isMutable)
        break
      }
    } else {
      object = ArchivedObject(
        classChain: ["NSHTTPURLResponse", "NSURLResponse", "NSObject"],
        fields: [
          ArchivedField("URL", .reference(url.map { .url(ArchivedURL(relative: $0)) } ?? .null)),
          ArchivedField("statusCode", .inline(.integer(PropertyListInteger(200)))),
        ])
      made = true
    }
    func matches(_ entry: ArchivedDictionaryEntry, _ name: String) -> Bool {
      if case .string(let key, _) = entry.key { return HTTPFieldName.equal(key, name) }
      return false
    }
    func value(_ name: String) -> String? {
      guard let entry = headers.first(where: { matches($0, name) }),
        case .string(let value, _) = entry.value
      else { return nil }
      return value
    }
    var changed = made
    for (index, name) in names.enumerated() {
      guard let text = wanted[index], value(name) != text else { continue }
      headers.removeAll { matches($0, name) }
      headers.append(ArchivedDictionaryEntry(.string(name), .string(text)))
      changed = true
      if !made {
        derived.append(
          Finding(
            "conversion-derived", .info,
            "the response's \(name) header field set to the dictionary's \(String(reflecting: text)): Network.framework reads its validators there",
            path: "response"))
      }
    }
    guard names.contains(where: { value($0) != nil }) else {
      throw ResumeDataError(
        .unsupported,
        "the blob has neither an ETag nor a Last-Modified date: Network.framework keeps its validators in the response, and no blob its loader could resume from can be made",
        at: ResumeDataKey.entityTag)
    }
    if made {
      derived.append(
        Finding(
          "conversion-derived", .info,
          "response made to hold the validators, which Network.framework keeps only there: an NSHTTPURLResponse (status 200) in this toolkit's field layout, as CFNetwork's is not public",
          path: "response"))
    }
    if !changed, let response { return response }
    let field = ArchivedField.Value.reference(.dictionary(headers, mutable: mutable))
    if let headerField {
      object.fields[headerField].value = field
    } else {
      object.fields.append(ArchivedField("allHeaderFields", field))
    }
    return .object(object)
  }

  /// A masked Network.framework blob holding the requests, response and partial file.
  mutating func networkFrameworkBytes(_ entries: PropertyListDictionary, of source: ResumeData)
    throws -> Data
  {
    func root(_ key: String) throws -> ArchivedValue? {
      guard let bytes = entries[key]?.dataValue else { return nil }
      return try ResumeDataError.wrapping(at: key) {
        try KeyedArchive(decoding: bytes).decodeRoot()
      }
    }
    guard let current = try root(ResumeDataKey.currentRequest) else {
      throw ResumeDataError(
        .unsupported, "a Network.framework blob needs the current request",
        at: ResumeDataKey.currentRequest)
    }
    var original = try root(ResumeDataKey.originalRequest)
    if original == nil {
      original = current
      derived.append(
        Finding(
          "conversion-derived", .info,
          "originalRequest filled with the current request: Network.framework's object holds both",
          path: "originalRequest"))
    }
    var fields = [
      ArchivedField("originalRequest", .reference(original ?? current)),
      ArchivedField("currentRequest", .reference(current)),
    ]
    let response = try responseHoldingValidators(
      try root(ResumeDataKey.response), entries,
      url: entries[ResumeDataKey.downloadURL]?.stringValue)
    fields.append(ArchivedField("response", .reference(response)))
    var named = entries
    try nameByTempFileName(&named)
    if let name = named[ResumeDataKey.tempFileName]?.stringValue {
      let path =
        entries[ResumeDataKey.localPath]?.stringValue
        ?? directory.map { $0.appendingPathComponent(name).standardizedFileURL.path }
      if let path {
        fields.append(
          ArchivedField(
            "fileURL",
            .reference(.url(ArchivedURL(relative: URL(fileURLWithPath: path).absoluteString)))))
      }
      fields.append(ArchivedField("tempFileName", .reference(.string(name))))
    }
    fields.append(ArchivedField("_keepDownloadTaskFile", .inline(.boolean(false))))
    let carried: Set<String> = [
      ResumeDataKey.currentRequest, ResumeDataKey.originalRequest, ResumeDataKey.response,
      ResumeDataKey.tempFileName, ResumeDataKey.localPath, ResumeDataKey.downloadURL,
      ResumeDataKey.infoVersion, ResumeDataKey.entityTag, ResumeDataKey.serverDownloadDate,
    ]
    dropped += entries.keys.filter { !carried.contains($0) }
    dropped += archivedOrder(source)
    let object = ArchivedObject(classChain: ResumeData.networkFrameworkClasses, fields: fields)
    let archive = try ResumeDataError.wrapping {
      try KeyedArchive(
        root: .object(object), rootKey: ResumeData.rootKey(of: .networkFramework).rawValue
      ).encoded(as: .binary)
    }
    return NetworkFrameworkMask.toggled(archive)
  }
}

extension ResumeData {
  /// The key of WebKit's bookmark data beside `$objects` (format reference §2).
  static let placeholderBookmarkKey = "ResumePlaceholderURLBookmarkData"

  /// WebKit's `ResumePlaceholderURLBookmarkData`: modern WebKit adds it beside `$objects` in the
  /// archive's envelope (or, in a blob written otherwise, the root dictionary holds it). Nil
  /// when the blob has none.
  public var placeholderBookmarkData: Data? {
    entries[Self.placeholderBookmarkKey]?.dataValue ?? envelopeBookmarkData
  }

  /// `ResumePlaceholderURLBookmarkData` beside `$objects`, where WebKit puts it.
  var envelopeBookmarkData: Data? {
    envelopeKept?.envelope[Self.placeholderBookmarkKey]?.dataValue
  }

  /// The archive whose keys beside `$objects` a keyed blob made from this one keeps: a keyed
  /// dictionary's own (its form's, which WebKit extends), when it has any; nil otherwise. Read
  /// without decoding the archive for a binary blob read in place, whose reader has checked that
  /// its envelope holds nothing else.
  var envelopeKept: KeyedArchive? {
    switch generation {
    case .keyed, .safari, .networkFrameworkWebKit:
      // A blob read in place holds only the four keys of the envelope.
      if isReadInPlace { return nil }
      guard let archive, !archive.extraTopLevelKeys.isEmpty else { return nil }
      return archive
    default: return nil
    }
  }

  /// A blob made from resume-dictionary values (``ResumeDataKey``), in any generation: the values
  /// are written as a v4 dictionary and converted, so the result is exactly what conversion gives.
  ///
  /// - Parameters:
  ///   - entries: the values; `NSURLSessionResumeInfoVersion` is set by the generation.
  ///   - generation: the form to write (keyed by default, as modern systems write it).
  ///   - format: `.xml` or `.binary`; nil for the generation's usual one.
  ///   - infoVersion: a keyed blob's info version (default 5).
  ///   - temporaryDirectory: where the partial file lives, for forms that name it by path.
  /// - Throws: ``ResumeDataError`` when the values cannot make a blob of that generation.
  public init(
    building entries: PropertyListDictionary, as generation: ResumeDataGeneration = .keyed,
    format: PropertyListFormat? = nil, infoVersion: Int? = nil, temporaryDirectory: URL? = nil
  ) throws {
    var plain = entries
    plain[ResumeDataKey.infoVersion] = .integer(PropertyListInteger(4))
    let bytes = try ResumeDataError.wrapping {
      try PropertyListValue.dictionary(plain).encoded(as: .xml)
    }
    let draft = try ResumeData(decoding: bytes)
    self =
      try draft.converted(
        to: generation, format: format, infoVersion: infoVersion,
        temporaryDirectory: temporaryDirectory
      ).blob
  }
}

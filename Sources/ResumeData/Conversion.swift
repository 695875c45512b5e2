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
  /// `temporaryDirectory`). Values only an archive can hold survive only into keyed targets.
  /// Network.framework's object carries the requests, the response and the partial file, but no
  /// byte count or validators of its own.
  ///
  /// - Parameters:
  ///   - target: the generation to write.
  ///   - format: `.xml` or `.binary`; nil for the target's usual one (XML for plain dictionaries,
  ///     binary for archives). Network.framework blobs are binary only.
  ///   - infoVersion: the `NSURLSessionResumeInfoVersion` of a keyed target (default 5); plain
  ///     targets always get their own (1, 2 or 4).
  ///   - temporaryDirectory: where the partial file lives, to turn a bare temp name into a path.
  /// - Returns: the converted blob, and findings: `converted`, plus `conversion-derived` for each
  ///   value made from another and `conversion-dropped` for each value the target cannot carry.
  /// - Throws: `ResumeDataError`: `.unsupported` when the target needs what the blob cannot give
  ///   (a partial-file path without a directory, say) or cannot carry what the blob must keep (a
  ///   segment map, into Network.framework's form), or a request archive's error.
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
      return nil
    }
    var notes = Conversion(directory: temporaryDirectory)
    var dictionary = try notes.portableEntries(self)
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
        let keyed = try ResumeDataError.wrapping {
          try Self.keyedBytes(pairs, format: wantedContainer == .keyedArchiveXML ? .xml : .binary)
        }
        bytes = keyed
        // Every pair from the dictionary: no archived value of the source's joins them.
        if wantedContainer == .keyedArchive, pairs.count == dictionary.count {
          written = ResumeData(
            writtenAsKeyed: dictionary, data: keyed,
            limits: KeyedArchiveLimits.default.propertyList, requestsOf: self)
        }
      }
    case .networkFramework:
      bytes = try notes.networkFrameworkBytes(dictionary, of: self)
    case .networkFrameworkWebKit:
      let inner = try converted(to: .networkFramework, temporaryDirectory: temporaryDirectory)
      try notes.nameByLocalPath(&dictionary)
      guard let path = dictionary[ResumeDataKey.localPath] else {
        throw ResumeDataError(.unsupported, "no partial-file path", at: ResumeDataKey.localPath)
      }
      let pairs = [
        ArchivedDictionaryEntry(.string("data"), .data(try inner.blob.encoded())),
        ArchivedDictionaryEntry(.string(ResumeDataKey.localPath), Self.archived(path)),
      ]
      notes.dropped += inner.findings.filter { $0.code == "conversion-dropped" }.map(\.path)
      bytes = try ResumeDataError.wrapping { try Self.keyedBytes(pairs) }
    }
    // Moved out of `written`, not copied.
    let blob = try (consume written) ?? ResumeData(decoding: bytes ?? Data(), requestsOf: self)
    var findings = notes.derived
    for key in notes.dropped where !key.isEmpty {
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

  /// Makes sure the partial file is named by a bare `TempFileName` (from LocalPath's last component).
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
    let original = try root(ResumeDataKey.originalRequest) ?? current
    var fields = [
      ArchivedField("originalRequest", .reference(original)),
      ArchivedField("currentRequest", .reference(current)),
    ]
    if let response = try root(ResumeDataKey.response) {
      fields.append(ArchivedField("response", .reference(response)))
    }
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
      ResumeDataKey.infoVersion,
    ]
    dropped += entries.keys.filter { !carried.contains($0) }
    dropped += archivedOrder(source)
    let object = ArchivedObject(classChain: ResumeData.networkFrameworkClasses, fields: fields)
    let archive = try ResumeDataError.wrapping {
      try KeyedArchive(root: .object(object)).encoded(as: .binary)
    }
    return NetworkFrameworkMask.toggled(archive)
  }
}

extension ResumeData {
  /// A blob made from resume-dictionary values (`ResumeDataKey`), in any generation: the values
  /// are written as a v4 dictionary and converted, so the result is exactly what conversion gives.
  ///
  /// - Parameters:
  ///   - entries: the values; `NSURLSessionResumeInfoVersion` is set by the generation.
  ///   - generation: the form to write (keyed by default, as modern systems write it).
  ///   - format: `.xml` or `.binary`; nil for the generation's usual one.
  ///   - infoVersion: a keyed blob's info version (default 5).
  ///   - temporaryDirectory: where the partial file lives, for forms that name it by path.
  /// - Throws: `ResumeDataError` when the values cannot make a blob of that generation.
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

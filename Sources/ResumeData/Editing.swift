import KeyedArchive
import PortableFoundation
import PropertyList

extension ResumeData {
  /// The two request keys, current first.
  public static let requestKeys = [ResumeDataKey.currentRequest, ResumeDataKey.originalRequest]

  /// Sets (or, with nil, removes) a plain value of the resume dictionary; a new key goes last.
  /// The blob is then written afresh by `encoded()`, in its own generation and container, a
  /// keyed one under the key CFNetwork reads it by (`rootKey(of:)`), whatever it had.
  ///
  /// - Throws: ``ResumeDataError`` with code `.unsupported` for Network.framework blobs, whose
  ///   fields are objects rather than dictionary values.
  public mutating func setEntry(_ key: String, _ value: PropertyListValue?) throws {
    try setEntry(key, value, refreshingRequests: true)
    if let form = ownArchiveForm { ownRootKeys = ArchiveRootKeys(Self.rootKey(of: form)) }
  }

  /// `setEntry(key, value)`; with `refreshingRequests` false, a request archive set is decoded
  /// only when the caller sets the last of several.
  mutating func setEntry(_ key: String, _ value: PropertyListValue?, refreshingRequests: Bool)
    throws
  {
    guard generation != .networkFramework else {
      throw ResumeDataError(
        .unsupported,
        "a Network.framework blob has no resume dictionary to edit; convert it first", at: key)
    }
    if value != nil, entries[key] == nil, archivedEntries[key] == nil,
      !rootKeyOrder.contains(where: { PropertyListDictionary.sameBytes($0, key) })
    {
      rootKeyOrder.append(key)
    }
    if value == nil, archivedEntries[key] != nil {
      archivedEntries[key] = nil
    }
    entries[key] = value
    isEdited = true
    entryKeysAreKnown = Unequated(false)
    refreshGeneration()
    if refreshingRequests, Self.requestKeys.contains(key) { refreshRequests() }
  }

  /// Sets the generation again from the entries, where it follows them, so that it is what the
  /// blob's bytes read back as after an edit.
  private mutating func refreshGeneration() {
    switch container {
    case .xmlPlist, .binaryPlist:
      // A plain blob's generation is read from its keys where its info version does not say
      // (none, or one no OS wrote, such as 8): removing a ByteRange can make it v2, and so on.
      generation = Self.plainGeneration(entries)
    default:
      // Keyed and Safari-made blobs differ only in their keys: an edit can make one the other (an
      // original request filled in a Safari blob), and its bytes then read back as the other.
      if generation == .keyed || generation == .safari {
        generation = Self.isSafariShaped(entries) ? .safari : .keyed
      }
    }
  }

  /// Points the blob at a new URL: `NSURLSessionDownloadURL` and the URL of both request archives.
  /// Everything else (headers, validators, the partial file) stays as it is.
  ///
  /// - Returns: one `edited` finding per value changed, naming its key.
  /// - Throws: ``ResumeDataError``: `.invalidEdit` for a URL that is not absolute http or https,
  ///   `.unsupported` for Network.framework blobs, or the error of a request archive that does not
  ///   decode.
  @discardableResult
  public mutating func setURL(_ url: String) throws -> [Finding] {
    // A URL is printable ASCII (RFC 3986 §2), anything else percent-encoded (and a host in
    // punycode): Apple's URL parsing before iOS 17 gives nil for a space, a control character or
    // a letter outside ASCII, and a blob holding one could not be resumed there.
    if let bad = url.unicodeScalars.first(where: { $0.value <= 0x20 || $0.value >= 0x7F }) {
      let digits = String(bad.value, radix: 16, uppercase: true)
      let character = "U+" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
      throw ResumeDataError(
        .invalidEdit,
        "\(String(reflecting: url)) holds \(character), which a URL cannot: percent-encode it "
          + "(a host in punycode)",
        at: ResumeDataKey.downloadURL)
    }
    guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(),
      scheme == "http" || scheme == "https", parsed.host?.isEmpty == false,
      (0...65535).contains(parsed.port ?? 0)
    else {
      throw ResumeDataError(
        .invalidEdit, "\(String(reflecting: url)) is not an absolute http or https URL",
        at: ResumeDataKey.downloadURL)
    }
    guard
      entries[ResumeDataKey.downloadURL] != nil || hasRequestArchive
        || generation == .networkFramework || generation == .networkFrameworkWebKit
    else {
      throw ResumeDataError(
        .unsupported,
        "the blob holds no URL to change (neither NSURLSessionDownloadURL nor a request archive)"
          + (isTiny || bytesReceived == 0 ? ": it is an empty blob, start the download over" : ""),
        at: ResumeDataKey.downloadURL)
    }
    var changes = [Finding]()
    try editRequests(&changes, "URL set to \(url)") { try $0.settingURL(url) }
    try setEntry(ResumeDataKey.downloadURL, .string(url))
    changes.insert(
      Finding("edited", .info, "the download URL is now \(url)", path: ResumeDataKey.downloadURL),
      at: 0)
    return changes + (try restoringAppleForms())
  }

  /// Whether the blob holds a current or original request archive.
  private var hasRequestArchive: Bool {
    Self.requestKeys.contains { entries[$0]?.dataValue != nil }
  }

  /// Adds or replaces (matched without regard to ASCII case, keeping its place) a header field of
  /// both request archives, or removes it when `value` is nil. A field is removed by any name, so
  /// that one that cannot be sent (`unsendable-header`) can be taken out.
  ///
  /// - Returns: one `edited` finding per request archive changed.
  /// - Throws: ``ResumeDataError``: `.invalidEdit` for adding a field whose name is not an HTTP
  ///   token or whose value holds a line break or NUL, `.unsupported` for Network.framework blobs
  ///   or for adding a header to a request without an HTTP message, or a request archive's own
  ///   error.
  @discardableResult
  public mutating func setHeader(_ name: String, _ value: String?) throws -> [Finding] {
    if let value,
      let problem = URLRequestFields.Header.problem(withName: name)
        ?? URLRequestFields.Header.problem(withValue: value, of: name)
    {
      throw ResumeDataError(.invalidEdit, problem, at: ResumeDataKey.currentRequest)
    }
    guard
      hasRequestArchive || generation == .networkFramework
        || generation == .networkFrameworkWebKit
    else {
      throw ResumeDataError(
        .unsupported,
        "the blob holds no request archive to carry header fields"
          + (isTiny || bytesReceived == 0 ? ": it is an empty blob, start the download over" : ""),
        at: ResumeDataKey.currentRequest)
    }
    var changes = [Finding]()
    let change =
      value.map { "header \(name) set to \(String(reflecting: $0))" } ?? "header \(name) removed"
    try editRequests(&changes, change) { request in
      let edited = try request.settingHeader(name, to: value)
      guard !edited.headerFields.elementsEqual(request.headerFields, by: ==) else { return nil }
      return edited
    } grown: { before, after in
      after.slotCount > before.slotCount
        ? " (grown from \(before.slotCount) to \(after.slotCount) slots, the HTTP message Apple archives a request with header fields with)"
        : ""
    }
    return changes + (try restoringAppleForms())
  }

  /// After an edit, what an Apple system reads in place of what it would not: request archives in
  /// the standard layout under `NSKeyedArchiveRootObjectKey` (the `$N` layout kept only in v1 and
  /// v2 blobs, whose readers include iOS 10.0–10.1), the blob's own archive and its response
  /// archive under the keys their decoders look up. The archive itself is written afresh under
  /// its key (`rebuilt`); each change is a finding, coded as the repair rule that makes it.
  mutating func restoringAppleForms() throws -> [Finding] {
    let keepsDollarLayout = generation == .v1 || generation == .v2
    var changes = try convertRequests(
      to: .standard, rule: RestoreStandardRequestLayout().name,
      keepingDollarNumbered: keepsDollarLayout)
    if keepsDollarLayout {
      for (index, key) in Self.requestKeys.enumerated()
      where decodedRequest(index)?.isInLayout(.dollarNumbered) == true {
        changes.append(
          Finding(
            "request-layout-kept", .info,
            "request archive kept in the $N layout under root, which iOS 10.0–10.1 reads back and later systems do not (repair for them restores the standard layout)",
            path: key))
      }
    }
    changes += try restoreArchiveRootKeys(rule: RestoreArchiveRootKeys().name)
    return changes
  }

  /// Applies `edit` to each request archive present (nil: unchanged), re-encoding it in place;
  /// `grown` says what more to tell of a request and its edited copy.
  private mutating func editRequests(
    _ changes: inout [Finding], _ change: String,
    _ edit: (URLRequestArchive) throws -> URLRequestArchive?,
    grown: (URLRequestArchive, URLRequestArchive) -> String = { _, _ in "" }
  ) throws {
    if generation == .networkFramework || generation == .networkFrameworkWebKit {
      throw ResumeDataError(
        .unsupported,
        "the requests of a Network.framework blob are objects of its archive; editing them is not supported",
        at: "")
    }
    var notes: [String: String] = [:]
    let edited = try rewriteRequests { index, bytes in
      let request = try URLRequestArchive(decoding: bytes)
      guard let changed = try edit(request) else { return nil }
      let edited = try changed.encoded()
      notes[Self.requestKeys[index]] = grown(request, changed)
      return edited == bytes ? nil : RequestRewrite(bytes: edited)
    }
    for key in edited {
      changes.append(
        Finding("edited", .info, "\(change) in the request archive\(notes[key] ?? "")", path: key))
    }
  }

  /// A request archive's new bytes, and the request they decode to when the rewrite knows it
  /// without reading them.
  struct RequestRewrite {
    var bytes: Data
    var decoded: URLRequestArchive? = nil
  }

  /// Replaces each request archive present with `rewrite` of it (nil leaves it as it is), and
  /// returns the keys replaced, current first.
  ///
  /// An original request that is the current one's bytes again (no redirect) is rewritten once,
  /// and the requests are decoded again once, after the last is set, unless every rewrite knew
  /// what its bytes decode to.
  mutating func rewriteRequests(_ rewrite: (_ index: Int, _ bytes: Data) throws -> RequestRewrite?)
    throws -> [String]
  {
    var replacements: [(index: Int, key: String, rewrite: RequestRewrite)] = []
    var previous: (bytes: Data, rewritten: RequestRewrite?)?
    for (index, key) in Self.requestKeys.enumerated() {
      guard let bytes = entries[key]?.dataValue else { continue }
      let rewritten: RequestRewrite?
      if let previous, previous.bytes == bytes {
        rewritten = previous.rewritten
      } else {
        rewritten = try ResumeDataError.wrapping(at: key) { try rewrite(index, bytes) }
        previous = (bytes, rewritten)
      }
      if let rewritten { replacements.append((index, key, rewritten)) }
    }
    let decodedAreKnown = replacements.allSatisfy { $0.rewrite.decoded != nil }
    for (position, replacement) in replacements.enumerated() {
      try setEntry(
        replacement.key, .data(replacement.rewrite.bytes),
        refreshingRequests: !decodedAreKnown && position == replacements.count - 1)
      if decodedAreKnown { setDecodedRequest(replacement.index, replacement.rewrite.decoded) }
    }
    return replacements.map(\.key)
  }

  /// The blob written afresh after an edit: plain dictionaries in their own format; keyed ones
  /// re-archived the way NSKeyedArchiver writes them, with the root's key order, root key, class
  /// and the envelope's extra top-level keys kept.
  func rebuilt() throws -> Data {
    try ResumeDataError.wrapping {
      switch container {
      case .xmlPlist: return try PropertyListValue.dictionary(entries).encoded(as: .xml)
      case .binaryPlist: return try PropertyListValue.dictionary(entries).encoded(as: .binary)
      case .keyedArchive, .keyedArchiveXML:
        var order = rootKeyOrder.filter { entries[$0] != nil || archivedEntries[$0] != nil }
        order += entries.keys.filter { !order.contains($0) }
        let pairs = order.map { key in
          ArchivedDictionaryEntry(
            .string(key), entries[key].map(Self.archived) ?? archivedEntries[key] ?? .null)
        }
        return try Self.keyedBytes(
          pairs, mutable: rootIsMutable, like: archive,
          format: container == .keyedArchiveXML ? .xml : .binary)
      case .nwArchive:
        throw ResumeDataError(
          .unsupported, "a Network.framework blob cannot be rewritten after an edit", at: "")
      }
    }
  }

  /// A plain value as an archived object.
  static func archived(_ value: PropertyListValue) -> ArchivedValue {
    switch value {
    case .string(let string): return .string(string)
    case .integer(let integer): return .integer(integer)
    case .real(let real): return .real(real)
    case .boolean(let flag): return .boolean(flag)
    case .data(let data): return .data(data)
    case .date(let date): return .date(date)
    case .array(let values): return .array(values.map(archived))
    case .dictionary(let dictionary):
      return .dictionary(
        dictionary.map { ArchivedDictionaryEntry(.string($0.key), archived($0.value)) })
    case .uid: return .null
    }
  }

  /// A keyed resume archive of a root dictionary, under the key CFNetwork reads it by (the literal
  /// `NSKeyedArchiveRootObjectKey`, whatever `original` had: see `rootKey(of:)`), keeping
  /// `original`'s extra top-level keys when there is one (WebKit's
  /// `ResumePlaceholderURLBookmarkData`).
  static func keyedBytes(
    _ pairs: [ArchivedDictionaryEntry], mutable: Bool = true, like original: KeyedArchive? = nil,
    format: PropertyListFormat = .binary
  ) throws -> Data {
    let rootKey = rootKey(of: .resumeDictionary).rawValue
    // A root of plain values, as resume blobs have, is written straight (the same bytes).
    if format == .binary, original?.extraTopLevelKeys.isEmpty ?? true,
      let bytes = KeyedArchive.encodedDictionary(pairs, mutable: mutable, rootKey: rootKey)
    {
      return bytes
    }
    var archive = try KeyedArchive(root: .dictionary(pairs, mutable: mutable), rootKey: rootKey)
    if let original, !original.extraTopLevelKeys.isEmpty,
      case .dictionary(var envelope) = archive.propertyList
    {
      for key in original.extraTopLevelKeys { envelope[key] = original.envelope[key] }
      archive = try KeyedArchive(propertyList: .dictionary(envelope), format: format)
    }
    return try archive.encoded(as: format)
  }
}

extension ResumeData {
  /// Moves every request archive not already in `layout`, under its root key, to it.
  ///
  /// - Parameter keepingDollarNumbered: leave archives in the `$N` layout as they are (moving only
  ///   a standard-layout archive that is under the wrong key).
  mutating func convertRequests(
    to layout: URLRequestArchive.Layout, rule: String, keepingDollarNumbered: Bool = false
  ) throws
    -> [Finding]
  {
    func kept(_ request: URLRequestArchive) -> Bool {
      request.isInLayout(layout) || keepingDollarNumbered && request.layout == .dollarNumbered
    }
    // The usual blob's requests are in the layout already: nothing to set up.
    func inLayout(_ index: Int) -> Bool {
      if let request = decodedRequest(index) { return kept(request) }
      return entries[Self.requestKeys[index]]?.dataValue == nil
    }
    if inLayout(0), inLayout(1) { return [] }
    // Decoded from these bytes when the blob was read or the key last set; decoded again only
    // when that failed, for its error.
    let decoded = [decodedRequest(0), decodedRequest(1)]
    var onlyRekeyed: Set<Int> = []
    let rewritten = try rewriteRequests { index, bytes in
      let request = try decoded[index] ?? URLRequestArchive(decoding: bytes)
      guard !kept(request) else { return nil }
      if request.layout == layout { onlyRekeyed.insert(index) }
      // Renamed in its bytes, the archive's request is known without reading them again.
      if let renamed = request.convertedInPlace(to: layout) {
        return RequestRewrite(bytes: renamed.bytes, decoded: renamed.request)
      }
      return RequestRewrite(bytes: try request.encodedConverted(to: layout))
    }
    return rewritten.map { key in
      let message =
        if onlyRekeyed.contains(Self.requestKeys.firstIndex(of: key) ?? -1) {
          "request archive's root moved under \(URLRequestArchive.rootKey(of: layout).rawValue), the key its layout is read under"
        } else if layout == .dollarNumbered {
          "request archive rewritten to the $N layout under root, which iOS 10.0–10.1 reads"
        } else {
          "request archive rewritten to the standard layout under NSKeyedArchiveRootObjectKey"
        }
      return Finding(rule, .info, message, path: key)
    }
  }
}

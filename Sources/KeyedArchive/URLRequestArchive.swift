import PortableFoundation
@_spi(Writing) import PropertyList

/// An archived NSURLRequest / NSMutableURLRequest in CFNetwork's layout (format reference §4).
///
/// The request object holds `$0` = 2, `$1` = 9, `$2` = N (the number of property slots: 16 without
/// an HTTP message, 22 with one), then the slots as UIDs under `__nsurlrequest_proto_prop_obj_0` …
/// `_{N-1}` (or, in the layout iOS 10.0–10.1 reads back, under `$3` … `$(N+2)`), and
/// `__nsurlrequest_proto_props`. The slots with a known meaning are typed here; every other slot,
/// every other key and every other object stays as it was read, so an unmodified request re-encodes
/// to the same bytes.
public struct URLRequestArchive: Sendable, Hashable {
  /// Where the slots live in the request object.
  public enum Layout: String, Sendable, Hashable {
    /// `__nsurlrequest_proto_prop_obj_i`: what every OS writes, and what every OS but iOS 10.0–10.1
    /// reads.
    case standard
    /// `$(i+3)`, with `$top` key `root`: what iOS 10.0–10.1 can read back (the repaired form).
    case dollarNumbered
  }

  /// The slot indexes whose meaning is known (format reference §4).
  public enum Slot: Int, Sendable, CaseIterable {
    /// isMutable (boolean).
    case isMutable = 0
    /// The URL (NSURL).
    case url = 1
    /// timeoutInterval in seconds (real).
    case timeoutInterval = 2
    /// cachePolicy (integer).
    case cachePolicy = 3
    /// mainDocumentURL (NSURL).
    case mainDocumentURL = 4
    /// HTTPShouldHandleCookies (boolean).
    case httpShouldHandleCookies = 5
    /// A bitmask of explicitly set properties (integer; inferred).
    case explicitFlags = 6
    /// allowsCellularAccess (boolean).
    case allowsCellularAccess = 9
    /// preventsIdleSystemSleep (boolean; inferred).
    case preventsIdleSystemSleep = 10
    /// timeWindowDelay (real; inferred).
    case timeWindowDelay = 12
    /// timeWindowDuration (real; inferred).
    case timeWindowDuration = 13
    /// networkServiceType (integer).
    case networkServiceType = 14
    /// requestPriority (integer, −1 by default).
    case priority = 15
    /// The HTTP method (string); present only with an HTTP message.
    case httpMethod = 18
    /// The header fields (dictionary of name → string).
    case headerFields = 19
    /// The body (data).
    case body = 20
  }

  /// The archive; its root is the request object. A request read with `init(decoding:limits:)`
  /// decodes it on first use: its typed fields are read straight from the bytes.
  public var archive: KeyedArchive { storage.archive }
  /// Which keys hold the slots.
  public let layout: Layout
  // Each slot's UID (0 when absent or `$null`), found once.
  let slotUIDs: [UInt64]
  let storage: LazyKeyedArchive
  // The typed fields read from the bytes, when the request was read on the fast path.
  let fast: FastFields?

  /// Reads a request archive (the bytes of a `NSURLSessionResumeCurrentRequest` value, say).
  ///
  /// Binary archives in the shape CFNetwork writes are read in place: only the objects the typed
  /// fields need are read, and the archive itself is decoded on first use of `archive`. Anything
  /// else, errors included, takes the same path as `init(archive: KeyedArchive(decoding:limits:))`.
  ///
  /// - Throws: ``KeyedArchiveError`` with a key path if the archive is malformed or its root is not
  ///   a request in CFNetwork's layout.
  public init(decoding data: Data, limits: KeyedArchiveLimits = .default) throws {
    try self.init(
      decoding: data, view: KeyedArchiveView(data, limits: limits.propertyList), limits: limits)
  }

  /// `init(decoding:limits:)` with the view it reads in place made already (`view`:
  /// `KeyedArchiveView(data, limits: limits.propertyList)`, nil when that is nil), for a caller
  /// that looked at the archive through it first.
  package init(decoding data: Data, view: KeyedArchiveView?, limits: KeyedArchiveLimits) throws {
    if let view,
      let request = URLRequestArchive(readingInPlace: data, archive: view, limits: limits)
    {
      self = request
      return
    }
    try self.init(archive: KeyedArchive(decoding: data, limits: limits))
  }

  /// Views an archive as a request.
  ///
  /// - Throws: ``KeyedArchiveError`` if the root is not a request in CFNetwork's layout.
  public init(archive: KeyedArchive) throws {
    storage = LazyKeyedArchive(archive)
    fast = nil
    let rootKey = archive.rootKey
    let rootUID = archive.envelope["$top"]?[rootKey]?.uidValue ?? 0
    // The path is only rendered when an error needs it.
    let path = { "$top.\(rootKey)" }
    guard case .dictionary(let fields) = try archive.object(rootUID, at: path()) else {
      throw KeyedArchiveError(.badObject, "is not an object", at: path())
    }
    guard archive.isInstance(rootUID, of: "NSURLRequest") else {
      throw KeyedArchiveError(.badObject, "is not an NSURLRequest", at: path())
    }
    if fields["__nsurlrequest_proto_prop_obj_0"] != nil {
      layout = .standard
    } else if fields["$3"]?.uidValue != nil {
      layout = .dollarNumbered
    } else {
      throw KeyedArchiveError(
        .badObject,
        "has neither __nsurlrequest_proto_prop_obj_0 nor $3: not CFNetwork's request layout",
        at: path())
    }
    slotUIDs = Self.findSlotUIDs(fields, layout: layout)
  }

  /// A request read in place (see `init(readingInPlace:archive:limits:)`).
  init(layout: Layout, slotUIDs: [UInt64], fast: FastFields, storage: LazyKeyedArchive) {
    self.layout = layout
    self.slotUIDs = slotUIDs
    self.storage = storage
    self.fast = fast
  }

  /// Whether this request was read in place and its archive has not been decoded yet (for tests
  /// that compare the two paths).
  @_spi(Differential)
  public var isReadInPlace: Bool { fast != nil && storage.isPending }

  /// Each slot's UID, in one pass over the request object's fields rather than building every
  /// slot's key for every lookup.
  private static func findSlotUIDs(_ fields: PropertyListDictionary, layout: Layout) -> [UInt64] {
    let count = max(0, min(Int(fields["$2"]?.int64Value ?? 0), 4096))
    var uids = [UInt64](repeating: 0, count: count)
    let prefix = layout == .standard ? "__nsurlrequest_proto_prop_obj_" : "$"
    let offset = layout == .standard ? 0 : 3
    _ = fields.entriesSatisfy { key, value in
      guard case .uid(let uid) = value, let number = Self.slotNumber(key, prefix: prefix) else {
        return true
      }
      let slot = number - offset
      if slot >= 0, slot < count { uids[slot] = uid }
      return true
    }
    return uids
  }

  /// A request archive built from typed values in CFNetwork's layout: `$0` = 2, `$1` = 9, `$2` = 16
  /// slots, or 22 when there is an HTTP message (a method, headers or a body), then the slots and
  /// `__nsurlrequest_proto_props` (`$null`), in `NSMutableURLRequest` or `NSURLRequest`.
  ///
  /// - Throws: ``KeyedArchiveError`` only if the archive cannot be built (it always can).
  public init(_ request: URLRequestFields) throws {
    let hasHTTPMessage =
      request.httpMethod != nil || !request.headerFields.isEmpty || request.body != nil
    let count = hasHTTPMessage ? 22 : 16
    var slots = [ArchivedValue](repeating: .null, count: count)
    slots[Slot.isMutable.rawValue] = .boolean(request.isMutable)
    slots[Slot.url.rawValue] = .url(ArchivedURL(relative: request.url))
    slots[Slot.timeoutInterval.rawValue] = .real(PropertyListReal(request.timeoutInterval))
    slots[Slot.cachePolicy.rawValue] = .integer(PropertyListInteger(request.cachePolicy))
    slots[Slot.mainDocumentURL.rawValue] =
      request.mainDocumentURL.map { .url(ArchivedURL(relative: $0)) } ?? .null
    slots[Slot.httpShouldHandleCookies.rawValue] = .boolean(request.httpShouldHandleCookies)
    slots[Slot.explicitFlags.rawValue] = .integer(PropertyListInteger(0))
    slots[Slot.allowsCellularAccess.rawValue] = .boolean(request.allowsCellularAccess)
    slots[Slot.preventsIdleSystemSleep.rawValue] = .boolean(false)
    slots[11] = .integer(PropertyListInteger(0))
    slots[Slot.timeWindowDelay.rawValue] = .real(PropertyListReal(0.0))
    slots[Slot.timeWindowDuration.rawValue] = .real(PropertyListReal(0.0))
    slots[Slot.networkServiceType.rawValue] = .integer(
      PropertyListInteger(request.networkServiceType))
    slots[Slot.priority.rawValue] = .integer(PropertyListInteger(request.priority))
    if hasHTTPMessage {
      slots[17] = .integer(PropertyListInteger(2))
      slots[Slot.httpMethod.rawValue] = .string(request.httpMethod ?? "GET")
      slots[Slot.headerFields.rawValue] = .dictionary(
        request.headerFields.map { ArchivedDictionaryEntry(.string($0.name), .string($0.value)) },
        mutable: true)
      slots[Slot.body.rawValue] = request.body.map { .data($0) } ?? .null
    }
    var fields: [ArchivedField] = [
      ArchivedField("$0", .inline(.integer(PropertyListInteger(2)))),
      ArchivedField("$1", .inline(.integer(PropertyListInteger(9)))),
      ArchivedField("$2", .inline(.integer(PropertyListInteger(count)))),
    ]
    for (index, value) in slots.enumerated() {
      fields.append(ArchivedField(Self.slotKey(index, in: .standard), .reference(value)))
    }
    fields.append(ArchivedField("__nsurlrequest_proto_props", .reference(.null)))
    fields += request.extraFields.map { ArchivedField($0.key, .inline($0.value)) }
    let chain =
      request.isMutable
      ? ["NSMutableURLRequest", "NSURLRequest", "NSObject"] : ["NSURLRequest", "NSObject"]
    try self.init(
      archive: KeyedArchive(root: .object(ArchivedObject(classChain: chain, fields: fields))))
  }

  /// N when `key` is `prefix` followed by the digits of N (at most 6, no leading zero: `obj_01` is
  /// some other key, not slot 1), else nil.
  private static func slotNumber(_ key: borrowing String, prefix: String) -> Int? {
    // Lengths first (O(1) for native strings): most keys are rejected without reading a byte.
    let keyLength = key.utf8.count
    let prefixLength = prefix.utf8.count
    guard keyLength > prefixLength, keyLength - prefixLength <= 6 else { return nil }
    let parsed = key.utf8.withContiguousStorageIfAvailable { keyBytes in
      prefix.utf8.withContiguousStorageIfAvailable { prefixBytes in
        slotNumber(keyBytes, prefix: prefixBytes)
      }
    }
    if case .some(.some(let number)) = parsed { return number }
    // Strings without contiguous UTF-8 (bridged ones) take a copy.
    return Array(key.utf8).withUnsafeBufferPointer { keyBytes in
      Array(prefix.utf8).withUnsafeBufferPointer { slotNumber(keyBytes, prefix: $0) }
    }
  }

  static func slotNumber(
    _ bytes: UnsafeBufferPointer<UInt8>, prefix: UnsafeBufferPointer<UInt8>
  )
    -> Int?
  {
    guard bytes.count > prefix.count, bytes.count - prefix.count <= 6,
      prefix.isEmpty || memcmp(bytes.baseAddress!, prefix.baseAddress!, prefix.count) == 0,
      bytes[prefix.count] != 0x30 || bytes.count == prefix.count + 1
    else { return nil }
    var value = 0
    for index in prefix.count..<bytes.count {
      let byte = bytes[index]
      guard (0x30...0x39).contains(byte) else { return nil }
      value = value * 10 + Int(byte - 0x30)
    }
    return value
  }

  /// The class of the request object (`NSURLRequest` or `NSMutableURLRequest`).
  public var className: String {
    fast?.otherValues.className ?? archive.classChain(ofObject: archive.rootUID)?.first ?? ""
  }

  /// The key under `$top` that names the request object (``KeyedArchive/rootKey``).
  public var rootKey: String { fast?.rootKey ?? archive.rootKey }

  /// Which of Apple's two root keys the archive's `$top` holds (`KeyedArchive.rootKeys`), found
  /// without making a string.
  public var rootKeys: ArchiveRootKeys { fast?.rootKeys ?? archive.rootKeys }

  /// `$2`: the number of property slots (16 without an HTTP message, 22 with one), taken as 0 when
  /// negative and capped at 4,096 so that no work is sized by a hostile count.
  public var slotCount: Int { slotUIDs.count }

  /// The key a slot lives under in this layout.
  public func key(ofSlot index: Int) -> String { Self.slotKey(index, in: layout) }

  /// The key slot `index` lives under in `layout`.
  static func slotKey(_ index: Int, in layout: Layout) -> String {
    // Made once for the slots requests have (16 or 22): building each with an interpolation cost
    // more than the rest of a layout conversion's renaming.
    let names = layout == .standard ? standardSlotKeys : dollarSlotKeys
    if index >= 0, index < names.count { return names[index] }
    switch layout {
    case .standard: return "__nsurlrequest_proto_prop_obj_\(index)"
    case .dollarNumbered: return "$\(index + 3)"
    }
  }

  private static let standardSlotKeys = (0..<32).map { "__nsurlrequest_proto_prop_obj_\($0)" }
  private static let dollarSlotKeys = (0..<32).map { "$\($0 + 3)" }

  /// The object in a slot, or nil when the slot is absent or `$null`.
  public func slotObject(_ index: Int) -> PropertyListValue? {
    guard index >= 0, index < slotUIDs.count, slotUIDs[index] != 0, !archive.isNull(slotUIDs[index])
    else {
      return nil
    }
    return try? archive.object(slotUIDs[index])
  }

  /// The typed value in a slot, or nil when the slot is absent, `$null`, or cannot be decoded.
  public func slotValue(_ slot: Slot) -> ArchivedValue? {
    guard slot.rawValue < slotUIDs.count, slotUIDs[slot.rawValue] != 0 else { return nil }
    return try? archive.decodeValue(slotUIDs[slot.rawValue])
  }

  /// The URL, as an absolute string.
  public var url: String? {
    if let known = fast?.values.url { return known }
    if case .url(let url)? = slotValue(.url) { return url.absoluteString }
    return nil
  }

  /// The main document URL, as an absolute string.
  public var mainDocumentURL: String? {
    if let known = fast?.otherValues.mainDocumentURL { return known }
    if case .url(let url)? = slotValue(.mainDocumentURL) { return url.absoluteString }
    return nil
  }

  /// The HTTP method (nil without an HTTP message; CFNetwork then means GET).
  public var httpMethod: String? {
    if let known = fast?.httpMethod { return known }
    if case .string(let method, _)? = slotValue(.httpMethod) { return method }
    return nil
  }

  /// The header fields in archived order.
  public var headerFields: [(name: String, value: String)] {
    if let known = fast?.headerFields { return known }
    if let fields = plainHeaderFields() { return fields }
    guard case .dictionary(let entries, _)? = slotValue(.headerFields) else { return [] }
    return entries.compactMap { entry in
      guard case .string(let name, _) = entry.key, case .string(let value, _) = entry.value else {
        return nil
      }
      return (name, value)
    }
  }

  /// Whether this request and `other` are one decoding of the same bytes (a blob whose current
  /// and original requests are the same archive decodes it once): what is true of one is true of
  /// the other, without looking.
  package func isSameDecoding(as other: URLRequestArchive) -> Bool {
    storage === other.storage
  }

  /// Whether every header field can be sent as it is (``URLRequestFields/Header/problem`` is nil
  /// for each); on a request read in place, checked on its bytes without making strings.
  public var headerFieldsAreSendable: Bool {
    if let fast, fast.headerFieldsAreSurelySendable { return true }
    return headerFields.allSatisfy {
      URLRequestFields.Header.isSendable(name: $0.name, value: $0.value)
    }
  }

  /// The header fields read straight from `NS.keys` and `NS.objects`, when the slot holds what
  /// CFNetwork writes: an NSDictionary or NSMutableDictionary whose keys and values all name plain
  /// string objects. Decoding it would give exactly these fields, through a typed value built only
  /// to be taken apart; anything else returns nil, for the decoder to handle.
  private func plainHeaderFields() -> [(name: String, value: String)]? {
    let slot = Slot.headerFields.rawValue
    let objects = archive.objects
    guard slot < slotUIDs.count, slotUIDs[slot] != 0, slotUIDs[slot] < UInt64(objects.count),
      case .dictionary(let fields) = objects[Int(slotUIDs[slot])],
      case .uid(let classUID)? = fields["$class"],
      let className = try? archive.mostDerivedClassName(classUID, at: ""),
      className == "NSDictionary" || className == "NSMutableDictionary",
      case .array(let keys)? = fields["NS.keys"], case .array(let values)? = fields["NS.objects"],
      keys.count == values.count,
      // The visits decoding would make: the dictionary, then each key and each value.
      1 + 2 * keys.count <= KeyedArchiveLimits.default.maximumVisits,
      KeyedArchiveLimits.default.effectiveMaximumDepth >= 1
    else { return nil }
    func string(_ reference: PropertyListValue) -> String? {
      guard case .uid(let uid) = reference, uid != 0, uid < UInt64(objects.count),
        case .string(let string) = objects[Int(uid)]
      else { return nil }
      return string
    }
    var result = [(name: String, value: String)]()
    result.reserveCapacity(keys.count)
    for index in keys.indices {
      guard let name = string(keys[index]), let value = string(values[index]) else { return nil }
      result.append((name, value))
    }
    return result
  }

  /// The value of a header field, its name matched without regard to ASCII case.
  public func headerValue(_ name: String) -> String? {
    headerFields.first { HTTPFieldName.equal($0.name, name) }?.value
  }

  /// The body.
  public var body: Data? {
    if let known = fast?.otherValues.body { return known }
    if case .data(let data, _)? = slotValue(.body) { return data }
    return nil
  }

  /// The timeout interval in seconds.
  public var timeoutInterval: Double? {
    if let fast { return fast.values.timeoutInterval }
    return realValue(.timeoutInterval)
  }
  /// The cache policy.
  public var cachePolicy: Int? {
    if let fast { return fast.otherValues.cachePolicy }
    return integerValue(.cachePolicy)
  }
  /// HTTPShouldHandleCookies.
  public var httpShouldHandleCookies: Bool? {
    if let fast { return fast.otherValues.httpShouldHandleCookies }
    return boolValue(.httpShouldHandleCookies)
  }
  /// allowsCellularAccess.
  public var allowsCellularAccess: Bool? {
    if let fast { return fast.otherValues.allowsCellularAccess }
    return boolValue(.allowsCellularAccess)
  }
  /// The network service type.
  public var networkServiceType: Int? {
    if let fast { return fast.otherValues.networkServiceType }
    return integerValue(.networkServiceType)
  }
  /// The request priority.
  public var priority: Int? {
    if let fast { return fast.otherValues.priority }
    return integerValue(.priority)
  }

  private func realValue(_ slot: Slot) -> Double? {
    switch slotObject(slot.rawValue) {
    case .real(let real)?: return real.value
    case .integer(let integer)?: return integer.int64Value.map(Double.init)
    default: return nil
    }
  }

  private func integerValue(_ slot: Slot) -> Int? {
    slotObject(slot.rawValue)?.int64Value.map { Int($0) }
  }

  private func boolValue(_ slot: Slot) -> Bool? {
    slotObject(slot.rawValue)?.boolValue
  }

  // MARK: Equality

  /// Equal archives in the same layout.
  public static func == (lhs: URLRequestArchive, rhs: URLRequestArchive) -> Bool {
    lhs.layout == rhs.layout && lhs.slotUIDs == rhs.slotUIDs && lhs.storage == rhs.storage
  }

  /// Hashes consistently with `==`, without decoding an archive read in place.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(layout)
    hasher.combine(slotUIDs)
  }

  // MARK: Editing

  /// A copy with a new URL (slot 1), everything else unchanged.
  ///
  /// - Throws: ``KeyedArchiveError`` if the request cannot be decoded.
  public func settingURL(_ url: String) throws -> URLRequestArchive {
    guard slotCount > Slot.url.rawValue else {
      throw KeyedArchiveError(
        .badObject, "has \(slotCount) slots, none for the URL", at: "$top.\(archive.rootKey)")
    }
    return try rebuilt { fields in
      fields.set(self.key(ofSlot: Slot.url.rawValue), .reference(.url(ArchivedURL(relative: url))))
    }
  }

  /// A copy with a header field added, or replaced (matched without regard to ASCII case, keeping
  /// its place), or removed when `value` is nil. A request without an HTTP message (16 slots) that
  /// gets a field grows one as Apple archives a request with header fields: `$2` becomes 22, and
  /// slots 16 to 21 are added after slot 15 (null, the integer 2, the method `GET`, the fields, no
  /// body, no body stream; format reference §4); removing from it changes nothing.
  ///
  /// - Throws: ``KeyedArchiveError`` if the request cannot be decoded, or has a slot count other
  ///   than 16 too small to hold header fields.
  public func settingHeader(_ name: String, to value: String?) throws -> URLRequestArchive {
    guard slotCount > Slot.headerFields.rawValue else {
      guard let value else { return self }
      guard slotCount == 16 else {
        throw KeyedArchiveError(
          .badObject, "has \(slotCount) slots, no HTTP message to hold header fields",
          at: "$top.\(archive.rootKey)")
      }
      return try withHTTPMessage(headerFields: [
        ArchivedDictionaryEntry(.string(name), .string(value))
      ])
    }
    var entries = [ArchivedDictionaryEntry]()
    var mutable = true
    if case .dictionary(let existing, let isMutable)? = slotValue(.headerFields) {
      entries = existing
      mutable = isMutable
    }
    let matches: (ArchivedDictionaryEntry) -> Bool = { entry in
      if case .string(let key, _) = entry.key {
        return HTTPFieldName.equal(key, name)
      }
      return false
    }
    if let value {
      if let position = entries.firstIndex(where: matches) {
        entries[position].value = .string(value)
      } else {
        entries.append(ArchivedDictionaryEntry(.string(name), .string(value)))
      }
    } else {
      entries.removeAll(where: matches)
    }
    return try rebuilt { fields in
      fields.set(
        self.key(ofSlot: Slot.headerFields.rawValue),
        .reference(.dictionary(entries, mutable: mutable)))
    }
  }

  /// The 16-slot request grown to 22 slots holding `headerFields` (see `settingHeader`).
  private func withHTTPMessage(headerFields: [ArchivedDictionaryEntry]) throws -> URLRequestArchive
  {
    // In the `$N` layout the props key follows the last slot: `$19` for 16 slots is slot 16's
    // key for 22, and moves to `$25`.
    let props = (old: "$\(slotCount + 3)", new: "$\(22 + 3)")
    let added: [ArchivedField.Value] = [
      .reference(.null), .reference(.integer(PropertyListInteger(2))), .reference(.string("GET")),
      .reference(.dictionary(headerFields, mutable: true)), .reference(.null), .reference(.null),
    ]
    let newFields = added.enumerated().map {
      ArchivedField(key(ofSlot: 16 + $0.offset), $0.element)
    }
    return try rebuilt { fields in
      if layout == .dollarNumbered, let index = fields.firstIndex(where: { $0.key == props.old }) {
        fields[index].key = props.new
      }
      fields.set("$2", .inline(.integer(PropertyListInteger(22))))
      let lastSlot = key(ofSlot: 15)
      let position = fields.firstIndex { $0.key == lastSlot }.map { $0 + 1 } ?? fields.count
      fields.insert(contentsOf: newFields, at: position)
    }
  }

  /// The `$top` key a request archive in `layout` goes under: `root` for the `$N` layout iOS
  /// 10.0–10.1 reads, the literal `NSKeyedArchiveRootObjectKey` for the standard one.
  public static func rootKey(of layout: Layout) -> ArchiveRootKey {
    layout == .dollarNumbered ? .root : .rootObjectKey
  }

  /// Whether the archive is in `layout` under the `$top` key that layout goes under (see
  /// `rootKey(of:)`): what `converted(to:)` leaves as it is.
  public func isInLayout(_ layout: Layout) -> Bool {
    self.layout == layout && rootKeys.holds(Self.rootKey(of: layout))
  }

  /// A copy in another slot layout: `.dollarNumbered` (with `$top` key `root`) is what iOS
  /// 10.0–10.1 can read back; `.standard` (with `NSKeyedArchiveRootObjectKey`) is what every other
  /// OS reads. Each slot key moves to its counterpart (and `__nsurlrequest_proto_props` to
  /// `$(N+3)`), in place, and the root goes under the layout's key; nothing else changes. An
  /// archive in the layout but under the other key (a third-party writer's) is only moved to the
  /// key.
  ///
  /// - Throws: ``KeyedArchiveError`` if the request cannot be decoded.
  public func converted(to target: Layout) throws -> URLRequestArchive {
    guard !isInLayout(target) else { return self }
    let count = slotCount
    let (prefix, offset) = layout == .standard ? ("__nsurlrequest_proto_prop_obj_", 0) : ("$", 3)
    let props = ("__nsurlrequest_proto_props", "$\(count + 3)")
    return try rebuilt(
      rootKey: target == .dollarNumbered ? "root" : "NSKeyedArchiveRootObjectKey"
    ) { fields in
      for index in fields.indices {
        let key = fields[index].key
        // Each key is read once: a slot key of the current layout moves to its counterpart.
        if let number = Self.slotNumber(key, prefix: prefix), number - offset >= 0,
          number - offset < count
        {
          let slot = number - offset
          fields[index].key = Self.slotKey(slot, in: target)
        } else if target == .dollarNumbered, key == props.0 {
          fields[index].key = props.1
        } else if target == .standard, key == props.1 {
          fields[index].key = props.0
        }
      }
    }
  }

  /// Re-archives the request after editing its fields, keeping every field and object it had.
  private func rebuilt(
    rootKey: String? = nil, _ edit: (inout [ArchivedField]) -> Void
  ) throws -> URLRequestArchive {
    guard case .object(var object) = try archive.decodeRoot() else {
      throw KeyedArchiveError(.badObject, "is not an object", at: "$top.\(archive.rootKey)")
    }
    edit(&object.fields)
    var builder = KeyedArchiveBuilder()
    let uid = builder.encode(.object(object))
    return try URLRequestArchive(
      archive: builder.archive(rootUID: uid, rootKey: rootKey ?? archive.rootKey))
  }

  /// The encoded archive (binary, as CFNetwork always writes request archives).
  ///
  /// - Throws: ``KeyedArchiveError`` if the archive cannot be written.
  public func encoded() throws -> Data {
    try archive.encoded(as: .binary)
  }
}

extension URLRequestFields.Header {
  /// Why `name` cannot name a header field, or nil: it must be an HTTP token (RFC 9110 §5.6.2:
  /// visible ASCII but separators).
  public static func problem(withName name: String) -> String? {
    isToken(name) ? nil : "\(String(reflecting: name)) is not an HTTP header name"
  }

  /// Why `value` cannot be the value of the field `name`, or nil: a line break or NUL would end
  /// the field, or the request, early (and let the value add fields of its own).
  public static func problem(withValue value: String, of name: String) -> String? {
    isSendableValue(value) ? nil : "the value of \(name) holds a line break or NUL"
  }

  /// Why this field cannot be sent as it is, or nil.
  public var problem: String? {
    Self.problem(withName: name) ?? Self.problem(withValue: value, of: name)
  }

  /// Whether a field of this name and value can be sent as it is (`problem` is nil), found
  /// without making the message: blobs are diagnosed by the thousand, and their fields are
  /// nearly always fine.
  public static func isSendable(name: String, value: String) -> Bool {
    isToken(name) && isSendableValue(value)
  }

  private static func isToken(_ name: String) -> Bool {
    name.withUTF8InPlace { isHTTPToken(UnsafeRawBufferPointer($0)) }
  }

  // By byte: "\r\n" is one Character, which a Character comparison would miss.
  private static func isSendableValue(_ value: String) -> Bool {
    value.withUTF8InPlace { !holdsLineBreakOrNul(UnsafeRawBufferPointer($0)) }
  }
}

/// The typed values of a request, for building a request archive.
public struct URLRequestFields: Sendable, Hashable {
  /// One header field.
  public struct Header: Sendable, Hashable {
    /// The field name.
    public var name: String
    /// The field value.
    public var value: String
    /// Creates a header field.
    public init(_ name: String, _ value: String) {
      self.name = name
      self.value = value
    }
  }

  /// The URL (absolute).
  public var url: String
  /// The HTTP method; nil (with no headers and no body) gives a request without an HTTP message.
  public var httpMethod: String?
  /// The header fields, in order.
  public var headerFields: [Header]
  /// The body.
  public var body: Data?
  /// The timeout interval in seconds (Foundation's default, 60).
  public var timeoutInterval: Double
  /// The cache policy (0, `useProtocolCachePolicy`).
  public var cachePolicy: Int
  /// The main document URL.
  public var mainDocumentURL: String?
  /// HTTPShouldHandleCookies (true).
  public var httpShouldHandleCookies: Bool
  /// allowsCellularAccess (true).
  public var allowsCellularAccess: Bool
  /// The network service type (0, default).
  public var networkServiceType: Int
  /// The request priority (−1, default).
  public var priority: Int
  /// Whether the class is NSMutableURLRequest (true) or NSURLRequest.
  public var isMutable: Bool
  /// Other plain values of the request object (`startTimeoutTime`, `allowsExpensiveNetworkAccess`,
  /// …).
  public var extraFields: PropertyListDictionary

  /// Creates request fields with Foundation's defaults.
  public init(
    url: String, httpMethod: String? = "GET", headerFields: [Header] = [], body: Data? = nil,
    timeoutInterval: Double = 60, cachePolicy: Int = 0, mainDocumentURL: String? = nil,
    httpShouldHandleCookies: Bool = true, allowsCellularAccess: Bool = true,
    networkServiceType: Int = 0,
    priority: Int = -1, isMutable: Bool = true, extraFields: PropertyListDictionary = [:]
  ) {
    self.url = url
    self.httpMethod = httpMethod
    self.headerFields = headerFields
    self.body = body
    self.timeoutInterval = timeoutInterval
    self.cachePolicy = cachePolicy
    self.mainDocumentURL = mainDocumentURL
    self.httpShouldHandleCookies = httpShouldHandleCookies
    self.allowsCellularAccess = allowsCellularAccess
    self.networkServiceType = networkServiceType
    self.priority = priority
    self.isMutable = isMutable
    self.extraFields = extraFields
  }
}

extension [ArchivedField] {
  /// Replaces the value of the field with a key, or appends the field.
  mutating func set(_ key: String, _ value: ArchivedField.Value) {
    if let index = firstIndex(where: { PropertyListDictionary.sameBytes($0.key, key) }) {
      self[index].value = value
    } else {
      append(ArchivedField(key, value))
    }
  }
}

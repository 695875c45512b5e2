import PortableFoundation
@_spi(InPlace) import PropertyList

// The fast path of `URLRequestArchive(decoding:limits:)`: the typed fields read straight from the
// bytes of a binary archive, without building its value tree or the archive.
//
// Each field is read here only in the shapes where what the bytes say is, plainly, what the
// accessor would return through the decoded archive (a URL without a base, a method that is a
// plain string, headers that are plain strings…); for any other shape the field is left unread
// (nil), and its accessor takes the eager path through `archive`, which is then decoded.
//
// Its tree twin: `URLRequestArchive(archive: KeyedArchive(decoding:))` and the accessors of
// URLRequestArchive.swift. Held equal by `RequestDifferential` (RequestDifferential.swift, which
// also holds `inPlaceSummary` to the slot table's reading) in
// Tests/KeyedArchiveTests/RequestFastPathTests.swift, and by the fuzz harness
// Fuzz/Sources/FuzzKeyedArchive/KeyedArchiveHarness.swift (check 0).

/// The typed fields of a request read in place, read from its bytes on first use: a request that is
/// only checked (its layout, whether it decodes), as a batch repair does, never builds them.
///
/// Immutable once read, and the reading is guarded by a mutex, so the box can be shared across
/// threads.
final class FastFields: Sendable {
  // The request, and the three groups of fields (the common fields, the rest, the headers) once
  // read. Each group is read apart: a typical reader asks for the URL and method, sometimes the
  // headers (which cost as much as every other field together), rarely the rest. The request is
  // kept once they are: a rewrite of its keys works on its checked bytes (a few kilobytes). A
  // `Locked` rather than a lock object: on Linux (a `Mutex`) one allocation fewer per request read.
  private struct State: @unchecked Sendable {
    // The checked plist it reads is only touched under the mutex.
    var request: InPlaceRequest
    var common: FastFieldValues?
    var others: FastOtherValues?
    var headers: [(name: String, value: String)]??
  }
  private let state: Locked<State>
  // The root key of an archive whose keys were renamed from `request`'s (see
  // `init(renaming:rootKey:)`): every other field reads the same from either archive's bytes.
  private let renamedRootKey: String?

  init(_ request: InPlaceRequest) {
    state = Locked(State(request: request))
    renamedRootKey = nil
  }

  /// The fields of the archive `source`'s request becomes when its keys are renamed in its bytes
  /// (`URLRequestArchive.renamingKeys`), root key `rootKey`: the renaming changes no object the
  /// fields are read from (each renamed key is a string referenced once, by the request object or
  /// `$top`, and every object keeps its index), so they are read from `source`'s checked bytes,
  /// and what `source` has read already serves.
  init(renaming source: FastFields, rootKey: String) {
    state = Locked(source.state.withLock { $0 })
    renamedRootKey = rootKey
  }

  /// Whether the request read is this archive's own (not one whose keys were renamed from it), so
  /// that its keys can be renamed in its bytes.
  var readsOwnBytes: Bool { renamedRootKey == nil }

  /// The common fields, read now if they were not yet.
  var values: FastFieldValues {
    read(\.common, FastFieldValues.init)
  }

  /// The key under `$top` that names the request: the renamed archive's, or the view's own
  /// (known from the checked `$top` without reading any field: a diagnosis asks for it alone).
  var rootKey: String {
    renamedRootKey ?? state.withLock { $0.request.archive.rootKey }
  }

  /// `rootKey` as the keys `$top` holds, made without a string.
  var rootKeys: ArchiveRootKeys {
    if let renamedRootKey {
      return renamedRootKey == ArchiveRootKey.root.rawValue ? .root : .rootObjectKey
    }
    return state.withLock { $0.request.archive.rootKeys }
  }

  /// `InPlaceRequest.httpMethod()`, read on each use: a short string from one slot, which a
  /// diagnosis asks for without the URL (whose string costs more than the method's).
  var httpMethod: String?? {
    state.withLock { $0.request.httpMethod() }
  }

  /// The other fields but the headers, read now if they were not yet.
  var otherValues: FastOtherValues { read(\.others, FastOtherValues.init) }

  /// `InPlaceRequest.headerFields()`, read now if it was not yet.
  var headerFields: [(name: String, value: String)]? {
    read(\.headers) { $0.headerFields() }
  }

  /// `InPlaceRequest.headerFieldsAreSurelySendable()`, checked on each use (no string is made,
  /// and a diagnosis asks once).
  var headerFieldsAreSurelySendable: Bool {
    state.withLock { $0.request.headerFieldsAreSurelySendable() }
  }

  /// What `body` makes of the request read in place, under the mutex.
  func withRequest<Result>(_ body: (InPlaceRequest) -> Result) -> Result {
    state.withLock { body($0.request) }
  }

  // A group, read from the request on first use.
  @inline(__always)
  private func read<Group: Sendable>(
    _ group: WritableKeyPath<State, Group?>, _ make: (InPlaceRequest) -> Group
  ) -> Group {
    state.withLock { state in
      if let read = state[keyPath: group] { return read }
      let read = make(state.request)
      state[keyPath: group] = read
      return read
    }
  }
}

/// The common typed fields of a request read in place. Double optionals: the outer nil means "not
/// read here, ask the archive", the inner one is the accessor's own nil.
final class FastFieldValues: Sendable {
  let url: String??
  let timeoutInterval: Double?

  init(_ request: InPlaceRequest) {
    url = request.url(.url)
    timeoutInterval = request.real(.timeoutInterval)
  }
}

/// The other typed fields of a request read in place, as `FastFieldValues` holds them.
final class FastOtherValues: Sendable {
  let className: String
  let mainDocumentURL: String??
  let body: Data??
  let cachePolicy: Int?
  let httpShouldHandleCookies: Bool?
  let allowsCellularAccess: Bool?
  let networkServiceType: Int?
  let priority: Int?

  init(_ request: InPlaceRequest) {
    className = request.archive.mostDerivedClassName(request.classUID)
    mainDocumentURL = request.url(.mainDocumentURL)
    body = request.body()
    cachePolicy = request.integer(.cachePolicy)
    httpShouldHandleCookies = request.boolean(.httpShouldHandleCookies)
    allowsCellularAccess = request.boolean(.allowsCellularAccess)
    networkServiceType = request.integer(.networkServiceType)
    priority = request.integer(.priority)
  }
}

extension URLRequestArchive {
  /// `init(readingInPlace:archive:limits:)` of bytes whose plist is checked already (`plist`, a
  /// view of `data` made under `limits.propertyList`): what
  /// `SubArchiveWriter.archivedAsRootWithView` wrote.
  package init?(
    readingWritten data: Data, plist: BinaryPropertyListView, limits: KeyedArchiveLimits
  ) {
    guard let archive = KeyedArchiveView(plist: plist) else { return nil }
    self.init(readingInPlace: data, archive: archive, limits: limits)
  }

  /// Reads a request in place through `archive`, the view of `data` made under
  /// `limits.propertyList`, or returns nil when the eager path must read it (anything it would
  /// refuse, and anything not in the plain shape `KeyedArchiveView` reads).
  @inline(__always)
  init?(readingInPlace data: Data, archive: KeyedArchiveView, limits: KeyedArchiveLimits) {
    guard let request = InPlaceRequest(archive) else { return nil }
    self.init(
      layout: request.layout, slotUIDs: request.slotUIDs, fast: FastFields(request),
      storage: LazyKeyedArchive(bytes: data, recipe: .decoding(limits)))
  }
}

/// What a diagnosis asks of a request archive that `URLRequestArchive(decoding:limits:)` reads
/// in place in the standard layout, read without making the request
/// (`URLRequestArchive.inPlaceSummary`).
package struct InPlaceRequestSummary: Sendable {
  /// Whether the method is surely GET or absent: no method slot, or a plain ASCII string that is
  /// `GET` in any case. False also when only the decoded archive can tell.
  package let methodIsSurelyGET: Bool
  /// `InPlaceRequest.headerFieldsAreSurelySendable()`.
  package let headerFieldsAreSurelySendable: Bool
  /// Whether the request's `rootKey` is `NSKeyedArchiveRootObjectKey` (with the standard layout:
  /// what iOS 10.0–10.1 cannot read back).
  package let rootKeyIsRootObjectKey: Bool
}

extension URLRequestArchive {
  /// The method's and headers' verdict of the request `init(decoding:limits:)` would read in place
  /// from `bytes` in the standard layout, read as that path reads them, from the five keys of the
  /// request object that tell (no slot table is made); nil when it would not read it in place, or
  /// the layout is another (the eager path then decides whether it decodes at all). The bytes are
  /// read where they are, during the call.
  package static func inPlaceSummary(of bytes: UnsafeRawBufferPointer, limits: KeyedArchiveLimits)
    -> InPlaceRequestSummary?
  {
    guard let archive = KeyedArchiveView(borrowing: bytes, limits: limits.propertyList) else {
      return nil
    }
    return InPlaceRequest.standardSummary(archive)
  }

  /// `inPlaceSummary(of:limits:)` read through a view made already (of a request's bytes, under
  /// the limits it is decoded with), which `init(decoding:view:limits:)` can then read.
  package static func inPlaceSummary(of archive: KeyedArchiveView) -> InPlaceRequestSummary? {
    InPlaceRequest.standardSummary(archive)
  }

  /// Whether a method is GET in any case: G, E and T in either ASCII case, the only letters that
  /// upper-case to them (what `method.uppercased() == "GET"` says, found without a new string).
  package static func isGETMethod(_ method: String) -> Bool { InPlaceRequest.isGET(method) }

  /// `inPlaceSummary(of:limits:)` read through `InPlaceRequest` and its slot table, the way the
  /// typed fields are read: what the one pass must agree with (for the differential tests).
  @_spi(Differential)
  public static func inPlaceSummaryThroughSlots(
    of bytes: UnsafeRawBufferPointer, limits: KeyedArchiveLimits
  ) -> (methodIsSurelyGET: Bool, headerFieldsAreSurelySendable: Bool, rootKey: String)? {
    guard let archive = KeyedArchiveView(bytes: bytes, limits: limits.propertyList),
      let request = InPlaceRequest(archive), request.layout == .standard
    else { return nil }
    let method = request.httpMethod()
    let isGET = method.map { $0.map { InPlaceRequest.isGET($0) } ?? true } ?? false
    return (isGET, request.headerFieldsAreSurelySendable(), archive.rootKey)
  }
}

/// The request object of an archive read in place: `URLRequestArchive(archive:)`'s checks, and its
/// fields' accessors, read from the bytes.
struct InPlaceRequest {
  let archive: KeyedArchiveView
  let fields: Int
  let classUID: UInt64
  let layout: URLRequestArchive.Layout
  let slotUIDs: [UInt64]

  /// Nil when `URLRequestArchive(archive:)` would throw.
  init?(_ archive: KeyedArchiveView) {
    guard let read = Self.read(archive) else { return nil }
    self.archive = archive
    (fields, classUID, layout, slotUIDs) = read
  }

  private static func read(_ archive: KeyedArchiveView) -> (
    fields: Int, classUID: UInt64, layout: URLRequestArchive.Layout, slotUIDs: [UInt64]
  )? {
    let table = archive.table
    let rootUID = archive.rootUID
    let fields = archive.object(rootUID)
    guard table.isKind(fields, .dictionary) else { return nil }
    // The named fields and the slot keys of either layout in one pass over the keys (ASCII and
    // distinct: the plist is plain), rather than a search for each.
    var classField: Int?
    var hasProtocolSlot = false
    var three: Int?
    var declared: Int?
    let fieldCount = table.count(fields)
    // Each field's slot number when its key reads as one, as `findSlotUIDs` reads it (the standard
    // prefix's as is, the `$` prefix's negated less one), or `Int.min`; only those whose value is a
    // UID count.
    let prefix = StandardPrefix()
    return withUnsafeTemporaryAllocation(of: Int.self, capacity: fieldCount) { numbers in
      for position in 0..<fieldCount {
        numbers[position] = .min
        guard let key = table.asciiBytes(table.key(fields, position)), let first = key.first
        else { continue }
        // Keys are told apart by their first byte and length, and a standard slot's prefix by
        // four words: a request has twenty-odd slots, and this loop is most of reading one.
        let number: Int?
        if first == UInt8(ascii: "_") {
          guard let standard = prefix.slotNumber(key) else { continue }
          if standard == 0, key.count == 31 { hasProtocolSlot = true }
          number = standard
        } else if first == UInt8(ascii: "$") {
          if key.count == 2 {
            if key[1] == UInt8(ascii: "3") { three = table.value(fields, position) }
            if key[1] == UInt8(ascii: "2") { declared = table.value(fields, position) }
          } else if key.count == 6, Self.isClassKey(key) {
            classField = table.value(fields, position)
          }
          number = Self.slotNumber(key, afterPrefixOf: 1).map { -1 &- $0 }
        } else {
          continue
        }
        if let number, table.isKind(table.value(fields, position), .uid) {
          numbers[position] = number
        }
      }
      // As `classUID(ofInstance:)` and `KeyedArchive.isInstance` read the root (the view has
      // checked that every `$class` field names a class object).
      guard let classField else { return nil }
      let classUID = table.uid(classField)
      guard archive.classChainContains(classUID, "NSURLRequest") else { return nil }
      let layout: URLRequestArchive.Layout
      if hasProtocolSlot {
        layout = .standard
      } else if let three, table.isKind(three, .uid) {
        layout = .dollarNumbered
      } else {
        return nil
      }
      // As `findSlotUIDs` reads them.
      var count = 0
      if let declared, table.isKind(declared, .integer),
        let value = table.integer(declared).int64Value
      {
        count = max(0, min(Int(value), 4096))
      }
      // Filled through its buffer: one allocation, and no uniqueness check per slot.
      let uids = [UInt64](unsafeUninitializedCapacity: count) { uids, initialized in
        uids.initialize(repeating: 0)
        initialized = count
        for position in 0..<fieldCount where numbers[position] != .min {
          let number = numbers[position]
          let slot: Int
          switch layout {
          case .standard:
            guard number >= 0 else { continue }
            slot = number
          case .dollarNumbered:
            guard number < 0 else { continue }
            slot = -1 &- number &- 3
          }
          if slot >= 0, slot < count {
            uids[slot] = table.uid(table.value(fields, position))
          }
        }
      }
      return (fields, classUID, layout, uids)
    }
  }

  /// `__nsurlrequest_proto_prop_obj_`, what a standard slot's key starts with, as four words (the
  /// last overlapping the third), in locals of the loop that compares keys with it.
  struct StandardPrefix {
    let words: (UInt64, UInt64, UInt64, UInt64)

    init() { words = Self.words(UnsafeRawPointer(Self.text.utf8Start)) }

    static let text: StaticString = "__nsurlrequest_proto_prop_obj_"

    @inline(__always)
    private static func words(_ bytes: UnsafeRawPointer) -> (UInt64, UInt64, UInt64, UInt64) {
      (
        bytes.loadUnaligned(as: UInt64.self),
        bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
        bytes.loadUnaligned(fromByteOffset: 16, as: UInt64.self),
        bytes.loadUnaligned(fromByteOffset: 22, as: UInt64.self)
      )
    }

    /// `URLRequestArchive.slotNumber(key, prefix: "__nsurlrequest_proto_prop_obj_")`, the
    /// prefix compared a word at a time.
    @inline(__always)
    func slotNumber(_ key: UnsafeRawBufferPointer) -> Int? {
      guard key.count > 30, key.count <= 36 else { return nil }
      let read = Self.words(key.baseAddress!)
      guard
        (read.0 ^ words.0) | (read.1 ^ words.1) | (read.2 ^ words.2) | (read.3 ^ words.3) == 0
      else { return nil }
      return InPlaceRequest.slotNumber(key, afterPrefixOf: 30)
    }
  }

  /// The number `URLRequestArchive.slotNumber` reads after a prefix of `prefixCount` bytes the
  /// caller has matched: one to six digits, without a leading zero unless it is the only one.
  @inline(__always)
  static func slotNumber(_ key: UnsafeRawBufferPointer, afterPrefixOf prefixCount: Int) -> Int? {
    guard key.count > prefixCount, key.count &- prefixCount <= 6,
      key[prefixCount] != UInt8(ascii: "0") || key.count == prefixCount &+ 1
    else { return nil }
    var value = 0
    for index in prefixCount..<key.count {
      let digit = key[index] &- UInt8(ascii: "0")
      guard digit <= 9 else { return nil }
      value = value &* 10 &+ Int(digit)
    }
    return value
  }

  @inline(__always)
  private static func isClassKey(_ key: UnsafeRawBufferPointer) -> Bool {
    let name: StaticString = "$class"
    return memcmp(key.baseAddress!, name.utf8Start, 6) == 0
  }

  private var plist: BinaryObjects { archive.table }

  // The object in a slot, as `slotValue` starts decoding it: nil when the slot is absent or UID 0.
  private func slotObject(_ slot: URLRequestArchive.Slot) -> Int? {
    guard slot.rawValue < slotUIDs.count, slotUIDs[slot.rawValue] != 0 else { return nil }
    return archive.object(slotUIDs[slot.rawValue])
  }

  // The object in a slot, as `slotObject` finds it: nil also when it is `$null`.
  private func plainSlotObject(_ slot: URLRequestArchive.Slot) -> Int? {
    guard slot.rawValue < slotUIDs.count, slotUIDs[slot.rawValue] != 0,
      !archive.isNull(slotUIDs[slot.rawValue])
    else { return nil }
    return archive.object(slotUIDs[slot.rawValue])
  }

  /// `realValue`.
  func real(_ slot: URLRequestArchive.Slot) -> Double? {
    guard let object = plainSlotObject(slot) else { return nil }
    switch plist.kind(object) {
    case .real: return plist.real(object).value
    case .integer: return plist.integer(object).int64Value.map(Double.init)
    default: return nil
    }
  }

  /// `integerValue`.
  func integer(_ slot: URLRequestArchive.Slot) -> Int? {
    guard let object = plainSlotObject(slot), plist.isKind(object, .integer) else { return nil }
    return plist.integer(object).int64Value.map { Int($0) }
  }

  /// `boolValue`.
  func boolean(_ slot: URLRequestArchive.Slot) -> Bool? {
    guard let object = plainSlotObject(slot), plist.isKind(object, .boolean) else { return nil }
    return plist.boolean(object)
  }

  /// `url` and `mainDocumentURL`: an NSURL without a base is its `NS.relative`. Only decoding can
  /// resolve a base, so a URL with one is left unread.
  func url(_ slot: URLRequestArchive.Slot) -> String?? {
    // Anything but an instance of NSURL decodes to something else, or fails to decode: no URL.
    guard let object = slotObject(slot), let classUID = archive.classUID(ofInstance: object),
      archive.mostDerivedClassIs(classUID, "NSURL")
    else { return .some(nil) }
    guard let relative = archive.referencedOrInlineString(object, "NS.relative") else {
      return .some(nil)
    }
    if let base = plist.value(object, forKey: "NS.base"), plist.isKind(base, .uid),
      !archive.isNull(plist.uid(base))
    {
      return nil
    }
    return .some(relative)
  }

  /// `httpMethod`: a plain string object; instances (NSString, NSMutableString) are left unread.
  func httpMethod() -> String?? {
    guard let object = slotObject(.httpMethod) else { return .some(nil) }
    switch plist.kind(object) {
    case .string: return .some(plist.string(object))
    case .dictionary: return nil
    default: return .some(nil)
    }
  }

  /// `body`: a plain data object; instances (NSData, NSMutableData) are left unread.
  func body() -> Data?? {
    guard let object = slotObject(.body) else { return .some(nil) }
    switch plist.kind(object) {
    case .data: return .some(plist.data(object))
    case .dictionary: return nil
    default: return .some(nil)
    }
  }

  /// `headerFields` when `plainHeaderFields` reads them (or there are none); nil otherwise.
  func headerFields() -> [(name: String, value: String)]? {
    let slot = slotObject(.headerFields)
    guard let (keys, values) = Self.plainHeaderArrays(slot, in: archive) else {
      return slot == nil ? [] : nil
    }
    var result = [(name: String, value: String)]()
    result.reserveCapacity(plist.count(keys))
    for position in 0..<plist.count(keys) {
      guard let name = Self.stringObject(plist.element(keys, position), in: archive),
        let value = Self.stringObject(plist.element(values, position), in: archive)
      else { return nil }
      result.append((plist.string(name), plist.string(value)))
    }
    return result
  }

  /// Whether every field `headerFields()` reads is surely one that can be sent as it is: an ASCII
  /// name that is an HTTP token, an ASCII value without a line break or NUL. Checked on the bytes,
  /// making no string. False when one is not, or may not be (a UTF-16 string, a shape read the
  /// eager way): the strings then tell.
  func headerFieldsAreSurelySendable() -> Bool {
    Self.headerFieldsAreSurelySendable(slotObject(.headerFields), in: archive)
  }

  /// `headerFieldsAreSurelySendable()` of the object in the header fields' slot (nil: none).
  static func headerFieldsAreSurelySendable(_ slot: Int?, in archive: KeyedArchiveView) -> Bool {
    guard let (keys, values) = plainHeaderArrays(slot, in: archive) else { return slot == nil }
    let plist = archive.table
    let (count, keysStart) = plist.contents(keys)
    let valuesStart = plist.contents(values).start
    for position in 0..<count {
      guard
        let name = stringObject(plist.reference(keysStart, position), in: archive).flatMap(
          plist.asciiBytes),
        let value = stringObject(plist.reference(valuesStart, position), in: archive).flatMap(
          plist.asciiBytes),
        isSendableHeaderField(name: name, value: value)
      else { return false }
    }
    return true
  }

  /// The `NS.keys` and `NS.objects` arrays of the header fields' slot object, when it holds what
  /// CFNetwork writes (an NSDictionary or NSMutableDictionary of two arrays of one count, within
  /// the visits decoding allows); nil for anything else, or no slot.
  private static func plainHeaderArrays(_ slot: Int?, in archive: KeyedArchiveView) -> (
    keys: Int, values: Int
  )? {
    let plist = archive.table
    guard let object = slot, let classUID = archive.classUID(ofInstance: object),
      // The class CFNetwork writes first.
      archive.mostDerivedClassIs(classUID, "NSMutableDictionary")
        || archive.mostDerivedClassIs(classUID, "NSDictionary"),
      let keys = plist.value(object, forKey: "NS.keys"), plist.isKind(keys, .array),
      let values = plist.value(object, forKey: "NS.objects"), plist.isKind(values, .array),
      plist.count(keys) == plist.count(values),
      // The visits decoding would make: the dictionary, then each key and each value.
      1 + 2 * plist.count(keys) <= KeyedArchiveLimits.default.maximumVisits,
      KeyedArchiveLimits.default.effectiveMaximumDepth >= 1
    else { return nil }
    return (keys, values)
  }

  /// The string object a reference's UID names, or nil when it names anything else.
  @inline(__always)
  private static func stringObject(_ reference: Int, in archive: KeyedArchiveView) -> Int? {
    let plist = archive.table
    guard plist.isKind(reference, .uid) else { return nil }
    let uid = plist.uid(reference)
    guard uid != 0, uid < UInt64(archive.count) else { return nil }
    let object = archive.object(uid)
    return plist.isKind(object, .string) ? object : nil
  }

  /// Whether a string object reads `GET` in any ASCII case (ASCII or UTF-16): the rule diagnosis
  /// uses (`URLRequestArchive.isGETMethod`), told on the bytes of an ASCII string.
  static func isGET(_ object: Int, in plist: BinaryObjects) -> Bool {
    guard let bytes = plist.asciiBytes(object) else { return isGET(plist.string(object)) }
    return bytes.count == 3 && isGET(UInt16(bytes[0]), UInt16(bytes[1]), UInt16(bytes[2]))
  }

  /// `isGET` of a method string.
  static func isGET(_ method: String) -> Bool {
    var units = method.utf16.makeIterator()
    guard let first = units.next(), let second = units.next(), let third = units.next(),
      units.next() == nil
    else { return false }
    return isGET(first, second, third)
  }

  @inline(__always)
  private static func isGET(_ first: UInt16, _ second: UInt16, _ third: UInt16) -> Bool {
    // ORing 0x20 maps a letter's two cases to the small one, and no other unit to g, e or t.
    first | 0x20 == UInt16(UInt8(ascii: "g")) && second | 0x20 == UInt16(UInt8(ascii: "e"))
      && third | 0x20 == UInt16(UInt8(ascii: "t"))
  }

  /// `URLRequestArchive.inPlaceSummary`: what `InPlaceRequest(archive)` reads of a request in the
  /// standard layout, then its method and header fields, from the five keys of the request object
  /// that tell (no slot table is made). Nil when `InPlaceRequest(archive)` would be, or the layout
  /// is not the standard one.
  static func standardSummary(_ archive: KeyedArchiveView) -> InPlaceRequestSummary? {
    let table = archive.table
    let fields = archive.object(archive.rootUID)
    guard table.isKind(fields, .dictionary) else { return nil }
    // `read`'s pass over the keys keeps, of a standard layout, only what five keys say (each
    // read as `read` reads it, and a plain dictionary has no key twice), so each is looked for
    // alone: first where CFNetwork writes it (`$0`, `$1`, `$2`, the slots from 0, their count's
    // key, then `$class`), then anywhere. The `$` prefix's slots, `$3` among them, count only in
    // the other layout.
    let (fieldCount, start) = table.contents(fields)
    // The value of the key `matches` accepts, looked for at `position` first.
    @inline(__always) func value(
      usuallyAt position: Int, _ matches: (UnsafeRawBufferPointer) -> Bool
    ) -> Int? {
      @inline(__always) func isMatch(_ position: Int) -> Bool {
        guard let key = table.asciiBytes(table.reference(start, position)) else { return false }
        return matches(key)
      }
      if position >= 0, position < fieldCount, isMatch(position) {
        return table.reference(start, fieldCount &+ position)
      }
      for other in 0..<fieldCount where other != position && isMatch(other) {
        return table.reference(start, fieldCount &+ other)
      }
      return nil
    }
    let prefix = StandardPrefix()
    @inline(__always) func slot(_ slot: Int) -> (UnsafeRawBufferPointer) -> Bool {
      { key in prefix.slotNumber(key) == slot }
    }
    // Without the protocol slot the layout is another: known before any other key is looked for.
    guard value(usuallyAt: 3, slot(0)) != nil else { return nil }
    let declared = value(usuallyAt: 2) {
      $0.count == 2 && $0[0] == UInt8(ascii: "$") && $0[1] == UInt8(ascii: "2")
    }
    let classField = value(usuallyAt: fieldCount &- 1) { $0.count == 6 && isClassKey($0) }
    // The two slots' values, when UIDs.
    let methodValue = value(
      usuallyAt: 3 &+ URLRequestArchive.Slot.httpMethod.rawValue,
      slot(URLRequestArchive.Slot.httpMethod.rawValue)
    )
    .flatMap { table.isKind($0, .uid) ? $0 : nil }
    let headersValue = value(
      usuallyAt: 3 &+ URLRequestArchive.Slot.headerFields.rawValue,
      slot(URLRequestArchive.Slot.headerFields.rawValue)
    )
    .flatMap { table.isKind($0, .uid) ? $0 : nil }
    guard let classField, archive.classChainContains(table.uid(classField), "NSURLRequest")
    else { return nil }
    // As `read` counts the slots, and `slotObject` finds a slot's object.
    var count = 0
    if let declared, table.isKind(declared, .integer),
      let value = table.integer(declared).int64Value
    {
      count = max(0, min(Int(value), 4096))
    }
    func object(_ value: Int?, _ slot: URLRequestArchive.Slot) -> Int? {
      guard let value, slot.rawValue < count else { return nil }
      let uid = table.uid(value)
      return uid == 0 ? nil : archive.object(uid)
    }
    // `httpMethod()`: a plain string is read, anything else but an instance is no method.
    let methodIsSurelyGET: Bool
    if let method = object(methodValue, .httpMethod) {
      switch table.kind(method) {
      case .string: methodIsSurelyGET = isGET(method, in: table)
      case .dictionary: methodIsSurelyGET = false
      default: methodIsSurelyGET = true
      }
    } else {
      methodIsSurelyGET = true
    }
    return InPlaceRequestSummary(
      methodIsSurelyGET: methodIsSurelyGET,
      headerFieldsAreSurelySendable: headerFieldsAreSurelySendable(
        object(headersValue, .headerFields), in: archive),
      rootKeyIsRootObjectKey: archive.rootKeyIsRootObjectKey)
  }
}

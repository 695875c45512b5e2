import CXMLShim
import PortableFoundation

/// Reads Apple's XML property-list format the way CoreFoundation does, streaming through libxml2.
///
/// The document is never built as a tree: libxml2's SAX2 parser feeds element events straight into
/// a value builder. The parser never loads a DTD, never fetches anything, and refuses a DOCTYPE
/// internal subset and any entity other than the five predefined ones, so external-entity and
/// "billion laughs" documents fail at once with `.forbidden`. The reader is a value; every `read`
/// uses its own parser, so reads may run concurrently.
public struct XMLPropertyListReader: Sendable {
  /// The bounds every read enforces.
  public let limits: PropertyListLimits

  /// Creates a reader.
  ///
  /// - Parameter limits: bounds on input size, nesting depth, value count and value length.
  public init(limits: PropertyListLimits = .default) {
    self.limits = limits
  }

  /// Reads one XML property list.
  ///
  /// Accepts an optional `<plist>` wrapper holding exactly one value, or a bare value element as
  /// the root, as CoreFoundation does. A dictionary holding only the key `CF$UID` with an integer
  /// value is read as a UID. Later duplicate keys replace earlier ones.
  ///
  /// - Parameter bytes: the whole document, in any encoding libxml2 detects (UTF-8 by default).
  /// - Returns: the root value.
  /// - Throws: ``PropertyListError``, located by 1-based line: `.malformed` for XML that is not
  ///   well-formed or elements out of place, `.forbidden` for DOCTYPE internal subsets and entity
  ///   references, `.invalidValue` for bad integers, reals, dates and base64, and `.limitExceeded`
  ///   when a limit is hit (the input-size check has no location). Every value and key element
  ///   counts toward `maximumObjectCount`; `maximumDepth` counts nested arrays and dictionaries,
  ///   not `<plist>`.
  public func read(_ bytes: Data) throws -> PropertyListValue {
    // One look into the Data: each one costs a dynamic exclusivity check of its storage.
    try bytes.withUnsafeBytes { try read($0) }
  }

  private func read(_ bytes: UnsafeRawBufferPointer) throws -> PropertyListValue {
    guard bytes.count <= limits.maximumInputSize else {
      throw PropertyListError(
        .limitExceeded,
        "input of \(bytes.count) bytes exceeds the limit of \(limits.maximumInputSize) bytes")
    }
    var builder = XMLValueBuilder(limits: limits)
    defer { builder.release() }
    // Callbacks reach the builder through a raw pointer: no reference counting and no dynamic
    // exclusivity checks, which would otherwise cost more than the parsing.
    var handlers = CXMLShimHandlers(
      startElement: { context, tag, prefix, name, line in
        XMLValueBuilder.at(context).pointee.start(tag, prefix: prefix, name: name, line: Int(line))
          ? 0 : 1
      },
      endElement: { context, line in
        XMLValueBuilder.at(context).pointee.end(line: Int(line)) ? 0 : 1
      },
      characters: { context, bytes, length, line in
        let text = UnsafeBufferPointer(start: bytes, count: Int(length))
        return XMLValueBuilder.at(context).pointee.characters(text, line: Int(line)) ? 0 : 1
      },
      error: { context, kind, line, message in
        XMLValueBuilder.at(context).pointee.parserFailed(kind, line: Int(line), message: message)
      })
    let status = withUnsafeMutablePointer(to: &builder) { builder in
      cxml_shim_parse(bytes.baseAddress, bytes.count, &handlers, UnsafeMutableRawPointer(builder))
    }
    return try builder.result(parserStatus: status)
  }
}

/// A stack of values in memory of its own, for the builder: elements move in and out without the
/// uniqueness checks, bounds checks and copies of an `Array`, and a run of them at the top moves
/// into a new array in one step. Its owner calls `release`.
private struct ManualStack<Element> {
  private(set) var base: UnsafeMutablePointer<Element>
  private(set) var count = 0
  private var capacity: Int

  // In blocks the thread reuses (`ReusableBlocks`) rather than from `allocate`, which on Linux
  // takes the slower aligned path.
  init(capacity: Int) {
    base = ReusableBlocks.allocate(Element.self, capacity: capacity)
    self.capacity = capacity
  }

  /// The top element, which must exist.
  var top: UnsafeMutablePointer<Element> { base + (count &- 1) }

  mutating func push(_ element: consuming Element) {
    if count == capacity { grow() }
    (base + count).initialize(to: element)
    count &+= 1
  }

  /// Removes and returns the top element, which must exist.
  mutating func pop() -> Element {
    count &-= 1
    return (base + count).move()
  }

  /// Moves the elements from `start` up into an array, leaving `start` elements.
  mutating func popArray(from start: Int) -> [Element] {
    let moved = count &- start
    guard moved > 0 else { return [] }
    count = start
    return Array(unsafeUninitializedCapacity: moved) { buffer, initialized in
      buffer.baseAddress!.moveInitialize(from: base + start, count: moved)
      initialized = moved
    }
  }

  /// Forgets the elements from `start` up, which the caller has moved out.
  mutating func forget(from start: Int) {
    count = start
  }

  private mutating func grow() {
    let larger = capacity * 2
    let memory = ReusableBlocks.allocate(Element.self, capacity: larger)
    memory.moveInitialize(from: base, count: count)
    ReusableBlocks.give(base)
    base = memory
    capacity = larger
  }

  mutating func release() {
    base.deinitialize(count: count)
    ReusableBlocks.give(base)
  }
}

/// The text of the element being read, gathered from however many calls libxml2 makes.
private struct TextBuffer {
  private(set) var base: UnsafeMutablePointer<UInt8>
  private(set) var count = 0
  private var capacity: Int

  // In a block the thread reuses (`ReusableBlocks`).
  init(capacity: Int) {
    base = ReusableBlocks.allocate(UInt8.self, capacity: capacity)
    self.capacity = capacity
  }

  var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: count) }

  mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
    guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
    let needed = count + bytes.count
    if needed > capacity {
      let larger = Swift.max(needed, capacity * 2)
      guard let memory = ReusableBlocks.resize(base, keeping: count, to: larger) else {
        fatalError("out of memory")
      }
      base = memory.bindMemory(to: UInt8.self, capacity: larger)
      capacity = larger
    }
    (base + count).initialize(from: source, count: bytes.count)
    count = needed
  }

  mutating func removeAll() { count = 0 }

  func release() { ReusableBlocks.give(base) }
}

/// Turns the shim's element events into a ``PropertyListValue``, keeping every open container's
/// values on flat stacks so that no per-container arrays are grown and copied while reading.
private struct XMLValueBuilder {
  private enum FrameKind {
    case document
    case plist
    case array
    case dictionary
  }

  private struct Frame {
    var kind: FrameKind
    /// Where this container's values start on `values`.
    var valueStart: Int
    /// Where this dictionary's keys start on `keys`.
    var keyStart: Int
    /// The line of the start tag.
    var line: Int
    /// For a dictionary: a key has been read and its value has not.
    var awaitingValue = false
    /// For the document and `<plist>`: how many values they hold (at most one is allowed).
    var valueCount = 0
  }

  private let limits: PropertyListLimits
  private var frames = ManualStack<Frame>(capacity: 8)
  private var values = ManualStack<PropertyListValue>(capacity: 16)
  // Each key with the fingerprint of its bytes, taken while the bytes are at hand, for finding
  // duplicates when its dictionary ends.
  private var keys = ManualStack<(key: String, print: UInt64)>(capacity: 16)
  private var depth = 0
  private var objectCount = 0

  /// The element whose text is being collected, when inside a leaf element.
  private var leaf: CXMLShimTag?
  private var leafLine = 0
  private var text = TextBuffer(capacity: 256)
  private var base64 = Base64Decoder()

  private var failure: PropertyListError?

  init(limits: PropertyListLimits) {
    self.limits = limits
    frames.push(Frame(kind: .document, valueStart: 0, keyStart: 0, line: 1))
  }

  /// Frees what the stacks hold; the builder is not used after.
  mutating func release() {
    frames.release()
    values.release()
    keys.release()
    text.release()
    base64.release()
  }

  static func at(_ context: UnsafeMutableRawPointer?) -> UnsafeMutablePointer<XMLValueBuilder> {
    context.unsafelyUnwrapped.assumingMemoryBound(to: XMLValueBuilder.self)
  }

  mutating func result(parserStatus: Int32) throws -> PropertyListValue {
    if let failure { throw failure }
    guard parserStatus == 0, values.count == 1, frames.count == 1 else {
      throw PropertyListError(.malformed, "no property-list value in the document", at: .line(1))
    }
    return values.pop()
  }

  // MARK: Events

  mutating func parserFailed(_ kind: CXMLShimErrorKind, line: Int, message: UnsafePointer<CChar>) {
    let text = String(cString: message)
    switch kind {
    case .forbidden:
      fail(.forbidden, text, line: line)
    case .limitExceeded:
      fail(.limitExceeded, XMLValueBuilder.cleaned(text), line: line)
    case .malformed:
      fail(.malformed, "not well-formed XML: " + XMLValueBuilder.cleaned(text), line: line)
    }
  }

  mutating func start(
    _ tag: CXMLShimTag, prefix: UnsafePointer<CChar>?, name: UnsafePointer<CChar>, line: Int
  ) -> Bool {
    if let leaf {
      return fail(
        .malformed,
        "unexpected element <\(Self.qualifiedName(prefix, name))> inside <\(Self.name(of: leaf))>",
        line: line)
    }
    switch tag {
    case .unknown:
      return fail(.malformed, "unknown element <\(Self.qualifiedName(prefix, name))>", line: line)
    case .plist:
      guard frames.count == 1, frames.base.pointee.valueCount == 0 else {
        return fail(.malformed, "unexpected <plist> inside \(placeName())", line: line)
      }
      frames.push(Frame(kind: .plist, valueStart: values.count, keyStart: keys.count, line: line))
      return true
    default:
      break
    }
    guard checkPlacement(of: tag, line: line) else { return false }
    objectCount += 1
    guard objectCount <= limits.maximumObjectCount else {
      return fail(
        .limitExceeded, "more than \(limits.maximumObjectCount) values and keys", line: line)
    }
    switch tag {
    case .dict, .array:
      depth += 1
      guard depth <= limits.maximumDepth else {
        return fail(
          .limitExceeded, "arrays and dictionaries nested deeper than \(limits.maximumDepth)",
          line: line)
      }
      let kind: FrameKind = tag == .dict ? .dictionary : .array
      frames.push(Frame(kind: kind, valueStart: values.count, keyStart: keys.count, line: line))
    case .data:
      base64.reset()
      startLeaf(tag, line: line)
    default:
      startLeaf(tag, line: line)
    }
    return true
  }

  mutating func end(line: Int) -> Bool {
    if let tag = leaf {
      leaf = nil
      return endLeaf(tag)
    }
    let frame = frames.pop()
    switch frame.kind {
    case .document:
      frames.push(frame)
      return fail(.malformed, "unexpected end tag at the document level", line: line)
    case .plist:
      guard frame.valueCount == 1 else {
        return fail(.malformed, "empty <plist>: it must contain one value", line: line)
      }
      frames.top.pointee.valueCount += 1
      return true
    case .array:
      depth -= 1
      return add(.array(values.popArray(from: frame.valueStart)))
    case .dictionary:
      depth -= 1
      if frame.awaitingValue {
        return fail(
          .malformed, "key \"\(Self.escaped(keys.top.pointee.key))\" in <dict> has no value",
          line: line)
      }
      return endDictionary(frame)
    }
  }

  mutating func characters(_ bytes: UnsafeBufferPointer<UInt8>, line: Int) -> Bool {
    guard let leaf else {
      guard let first = bytes.firstIndex(where: { !Self.isWhitespace($0) }) else { return true }
      // libxml2 reports the line where the run of text ends; the error belongs where it starts.
      let newlines = bytes[first...].reduce(0) { $1 == 0x0A ? $0 + 1 : $0 }
      let text = Self.trimmed(UnsafeBufferPointer(rebasing: bytes[first...]))
      return fail(
        .malformed, "unexpected text \"\(Self.excerpt(text))\" in \(placeName())",
        line: line - newlines)
    }
    switch leaf {
    case .data:
      guard base64.decode(bytes) else {
        return fail(
          .invalidValue, "invalid base64 in <data> (\(base64.problem))", line: leafLine)
      }
      guard base64.count <= limits.maximumValueLength else {
        return fail(
          .limitExceeded, "<data> longer than \(limits.maximumValueLength) bytes", line: leafLine)
      }
    case .true, .false:
      return fail(.malformed, "<\(Self.name(of: leaf))> must be empty", line: leafLine)
    default:
      guard text.count + bytes.count <= limits.maximumValueLength else {
        return fail(
          .limitExceeded, "<\(Self.name(of: leaf))> longer than \(limits.maximumValueLength) bytes",
          line: leafLine)
      }
      text.append(bytes)
    }
    return true
  }

  // MARK: Structure

  /// Checks that a value or key element may start here (keys and values alternate in a dictionary,
  /// the document and `<plist>` hold one value, keys appear only in dictionaries).
  private mutating func checkPlacement(of tag: CXMLShimTag, line: Int) -> Bool {
    let top = frames.top.pointee
    switch top.kind {
    case .dictionary:
      if tag == .key {
        if top.awaitingValue {
          return fail(
            .malformed, "key \"\(Self.escaped(keys.top.pointee.key))\" in <dict> has no value",
            line: line)
        }
      } else if !top.awaitingValue {
        return fail(
          .malformed, "expected <key> in <dict>, found <\(Self.name(of: tag))>", line: line)
      }
    case .array:
      if tag == .key { return fail(.malformed, "<key> outside a <dict>", line: line) }
    case .plist, .document:
      if tag == .key { return fail(.malformed, "<key> outside a <dict>", line: line) }
      if top.valueCount > 0 {
        return fail(
          .malformed,
          "<\(Self.name(of: tag))> after the value: \(placeName()) holds only one value",
          line: line)
      }
    }
    return true
  }

  private mutating func startLeaf(_ tag: CXMLShimTag, line: Int) {
    leaf = tag
    leafLine = line
    text.removeAll()
  }

  private mutating func add(_ value: consuming PropertyListValue) -> Bool {
    values.push(value)
    let top = frames.top
    switch top.pointee.kind {
    case .dictionary: top.pointee.awaitingValue = false
    case .plist, .document: top.pointee.valueCount += 1
    case .array: break
    }
    return true
  }

  private mutating func endDictionary(_ frame: Frame) -> Bool {
    let count = values.count - frame.valueStart
    let keyBase = keys.base + frame.keyStart
    let valueBase = values.base + frame.valueStart
    var dictionary: PropertyListDictionary
    if count <= PropertyListDictionary.indexThreshold,
      !Self.hasEqualPrints(keyBase, count: count)
    {
      // No key twice (the fingerprints of equal bytes are equal): the entries move into place
      // as they are, and the dictionary has nothing to fold or index.
      let entries = [PropertyListDictionary.Element](unsafeUninitializedCapacity: count) {
        buffer, initialized in
        for position in 0..<count {
          (buffer.baseAddress.unsafelyUnwrapped + position).initialize(
            to: ((keyBase + position).move().key, (valueBase + position).move()))
        }
        initialized = count
      }
      dictionary = PropertyListDictionary(uniqueKeys: entries)
    } else {
      dictionary = PropertyListDictionary()
      dictionary.reserveCapacity(count)
      for position in 0..<count {
        dictionary.appendUnchecked((keyBase + position).move().key, (valueBase + position).move())
      }
      dictionary.finishBuilding()
    }
    values.forget(from: frame.valueStart)
    keys.forget(from: frame.keyStart)
    // CoreFoundation reads {CF$UID: integer} as a keyed-archive UID; XML keyed archives depend on it.
    if dictionary.count == 1, dictionary.entries[0].key == "CF$UID",
      case .integer(let number) = dictionary.entries[0].value
    {
      guard let uid = number.uint64Value, uid <= UInt64(UInt32.max) else {
        return fail(
          .invalidValue, "CF$UID \(number) is outside 0...\(UInt32.max)", line: frame.line)
      }
      return add(.uid(uid))
    }
    return add(.dictionary(dictionary))
  }

  /// Whether two of the `count` keys at `keys` have the same fingerprint.
  private static func hasEqualPrints(
    _ keys: UnsafeMutablePointer<(key: String, print: UInt64)>, count: Int
  ) -> Bool {
    var position = 1
    while position < count {
      let print = keys[position].print
      var earlier = 0
      while earlier < position {
        if keys[earlier].print == print { return true }
        earlier &+= 1
      }
      position &+= 1
    }
    return false
  }

  // MARK: Leaf values

  private mutating func endLeaf(_ tag: CXMLShimTag) -> Bool {
    switch tag {
    case .key:
      let bytes = UnsafeRawBufferPointer(text.bytes)
      let print = keyFingerprint(bytes)
      let key = KnownKeys.find(bytes, print: print) ?? String(decoding: text.bytes, as: UTF8.self)
      keys.push((key, print))
      frames.top.pointee.awaitingValue = true
      return true
    case .string:
      return add(.string(String(decoding: text.bytes, as: UTF8.self)))
    case .data:
      guard base64.finish() else {
        return fail(.invalidValue, "invalid base64 in <data> (\(base64.problem))", line: leafLine)
      }
      guard base64.count <= limits.maximumValueLength else {
        return fail(
          .limitExceeded, "<data> longer than \(limits.maximumValueLength) bytes", line: leafLine)
      }
      return add(.data(base64.takeData()))
    case .true:
      return add(.boolean(true))
    case .false:
      return add(.boolean(false))
    case .integer:
      return parseInteger(text.bytes)
    case .real:
      return parseReal(text.bytes)
    case .date:
      return parseDate(text.bytes)
    default:
      return fail(.malformed, "unexpected element", line: leafLine)
    }
  }

  private mutating func parseInteger(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
    let trimmed = Self.trimmed(text)
    guard !trimmed.isEmpty else { return fail(.invalidValue, "empty <integer>", line: leafLine) }
    switch XMLNumberParser.integer(trimmed) {
    case .some(.success(let value)):
      return add(.integer(value))
    case .some(.failure):
      return fail(
        .invalidValue, "<integer> \(Self.excerpt(trimmed)) is outside the 64-bit range",
        line: leafLine)
    case .none:
      return fail(.invalidValue, "invalid <integer> \"\(Self.excerpt(trimmed))\"", line: leafLine)
    }
  }

  private mutating func parseReal(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
    let trimmed = Self.trimmed(text)
    guard !trimmed.isEmpty else { return fail(.invalidValue, "empty <real>", line: leafLine) }
    guard let value = XMLNumberParser.real(trimmed) else {
      return fail(.invalidValue, "invalid <real> \"\(Self.excerpt(trimmed))\"", line: leafLine)
    }
    return add(.real(PropertyListReal(value)))
  }

  private mutating func parseDate(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
    guard let time = XMLNumberParser.date(text) else {
      return fail(
        .invalidValue, "invalid <date> \"\(Self.excerpt(text))\" (expected YYYY-MM-DDTHH:MM:SSZ)",
        line: leafLine)
    }
    return add(.date(Date(timeIntervalSinceReferenceDate: time)))
  }

  // MARK: Helpers

  @discardableResult
  private mutating func fail(_ code: PropertyListError.Code, _ message: String, line: Int) -> Bool {
    if failure == nil { failure = PropertyListError(code, message, at: .line(max(line, 1))) }
    return false
  }

  private func placeName() -> String {
    switch frames.top.pointee.kind {
    case .document: return "the document"
    case .plist: return "<plist>"
    case .array: return "<array>"
    case .dictionary: return "<dict>"
    }
  }

  private static func name(of tag: CXMLShimTag) -> String {
    switch tag {
    case .unknown: return "?"
    case .plist: return "plist"
    case .dict: return "dict"
    case .array: return "array"
    case .key: return "key"
    case .string: return "string"
    case .data: return "data"
    case .date: return "date"
    case .integer: return "integer"
    case .real: return "real"
    case .true: return "true"
    case .false: return "false"
    }
  }

  private static func qualifiedName(_ prefix: UnsafePointer<CChar>?, _ name: UnsafePointer<CChar>)
    -> String
  {
    let local = String(cString: name)
    guard let prefix else { return local }
    return String(cString: prefix) + ":" + local
  }

  private static func isWhitespace(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    for byte in bytes where !isWhitespace(byte) { return false }
    return true
  }

  @inline(__always)
  static func isWhitespace(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D
  }

  private static func trimmed(_ text: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
    var start = 0
    var end = text.count
    while start < end, isWhitespace(text[start]) { start += 1 }
    while end > start, isWhitespace(text[end - 1]) { end -= 1 }
    return UnsafeBufferPointer(rebasing: text[start..<end])
  }

  /// At most 40 bytes of the text, for messages, escaped so that a message stays on one line.
  private static func excerpt(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
    let shown = escaped(String(decoding: bytes.prefix(40), as: UTF8.self))
    return bytes.count > 40 ? shown + "…" : shown
  }

  /// Text for inside quotes in a message: quotes, backslashes and control characters escaped as in
  /// JSON.
  static func escaped(_ text: String) -> String {
    var quoted = ""
    appendJSONString(text, to: &quoted)
    return String(quoted.dropFirst().dropLast())
  }

  /// libxml2's messages end in newlines and sometimes " !"; this makes them one clean line.
  static func cleaned(_ message: String) -> String {
    var lines: [String] = []
    for line in message.split(whereSeparator: \.isNewline) {
      // Split at newlines, a line's white space is what CharacterSet.whitespaces holds (which
      // FoundationEssentials lacks).
      var part = line.drop(while: \.isWhitespace)
      while part.last?.isWhitespace == true { part.removeLast() }
      while part.hasSuffix("!") || part.hasSuffix(" ") { part.removeLast() }
      if !part.isEmpty { lines.append(String(part)) }
    }
    return lines.isEmpty ? "XML parse error" : lines.joined(separator: "; ")
  }
}
/// Parsers for the text of `<integer>`, `<real>` and `<date>`, working on bytes without Foundation.
enum XMLNumberParser {
  /// Parses `[+-] S* (digits | 0x hexdigits)` (S is whitespace, which CoreFoundation allows after
  /// the sign). Returns nil when the text is not an integer, and `.failure` when it is one outside
  /// `Int64.min ... UInt64.max`.
  static func integer(_ text: UnsafeBufferPointer<UInt8>) -> Result<
    PropertyListInteger, RangeError
  >? {
    var index = 0
    var negative = false
    if index < text.count, text[index] == UInt8(ascii: "-") || text[index] == UInt8(ascii: "+") {
      negative = text[index] == UInt8(ascii: "-")
      index += 1
      while index < text.count, XMLValueBuilder.isWhitespace(text[index]) { index += 1 }
    }
    var radix: UInt64 = 10
    if index + 1 < text.count, text[index] == UInt8(ascii: "0"),
      text[index + 1] | 0x20 == UInt8(ascii: "x")
    {
      radix = 16
      index += 2
    }
    guard index < text.count else { return nil }
    var magnitude: UInt64 = 0
    var overflow = false
    while index < text.count {
      let byte = text[index]
      let digit: UInt64
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt64(byte - UInt8(ascii: "0"))
      case UInt8(ascii: "a")...UInt8(ascii: "f") where radix == 16:
        digit = UInt64(byte - UInt8(ascii: "a") + 10)
      case UInt8(ascii: "A")...UInt8(ascii: "F") where radix == 16:
        digit = UInt64(byte - UInt8(ascii: "A") + 10)
      default: return nil
      }
      // Keep scanning after an overflow so that junk later in the text is still reported as junk.
      let (shifted, o1) = magnitude.multipliedReportingOverflow(by: radix)
      let (sum, o2) = shifted.addingReportingOverflow(digit)
      overflow = overflow || o1 || o2
      magnitude = sum
      index += 1
    }
    if overflow { return .failure(RangeError()) }
    if negative {
      guard magnitude <= UInt64(Int64.max) + 1 else { return .failure(RangeError()) }
      return .success(PropertyListInteger(Int64(truncatingIfNeeded: 0 &- magnitude)))
    }
    return .success(PropertyListInteger(magnitude))
  }

  /// An integer outside the range property lists hold.
  struct RangeError: Error {}

  /// Parses a decimal real (`strtod` syntax without hexadecimal) or one of CoreFoundation's special
  /// spellings (`nan`, `inf`, `infinity`, optionally signed, any case).
  static func real(_ text: UnsafeBufferPointer<UInt8>) -> Double? {
    if let special = specialReal(text) { return special }
    // strtod would also take hex floats, "nan(…)" and "infinite"-style prefixes; CoreFoundation's
    // writer never produces those, so only decimal syntax reaches the conversion.
    for byte in text {
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "-"),
        UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"):
        continue
      default:
        return nil
      }
    }
    // Swift's Double(_:) is strtod in the C locale with a whole-text check, so a locale that uses a
    // decimal comma can never change the result.
    return Double(String(decoding: text, as: UTF8.self))
  }

  private static func specialReal(_ text: UnsafeBufferPointer<UInt8>) -> Double? {
    guard text.count <= 9, let first = text.first else { return nil }
    var sign = 1.0
    var body = text[...]
    if first == UInt8(ascii: "+") || first == UInt8(ascii: "-") {
      sign = first == UInt8(ascii: "-") ? -1 : 1
      body = body.dropFirst()
    }
    // Setting bit 5 lower-cases ASCII letters; anything else then fails the comparison.
    guard let letter = body.first.map({ $0 | 0x20 }),
      letter == UInt8(ascii: "i") || letter == UInt8(ascii: "n")
    else { return nil }
    func spells(_ word: StaticString) -> Bool {
      body.count == word.utf8CodeUnitCount
        && zip(body, UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount))
          .allSatisfy { $0 | 0x20 == $1 }
    }
    if spells("inf") || spells("infinity") { return sign * .infinity }
    if body.count == text.count, spells("nan") { return .nan }
    return nil
  }

  /// Parses exactly `YYYY-MM-DDTHH:MM:SSZ` (years 0001–9999) into seconds since 2001-01-01.
  static func date(_ text: UnsafeBufferPointer<UInt8>) -> Double? {
    guard text.count == 20, text[4] == UInt8(ascii: "-"), text[7] == UInt8(ascii: "-"),
      text[10] == UInt8(ascii: "T"), text[13] == UInt8(ascii: ":"), text[16] == UInt8(ascii: ":"),
      text[19] == UInt8(ascii: "Z")
    else { return nil }
    func number(_ start: Int, _ count: Int) -> Int? {
      var value = 0
      for index in start..<start + count {
        let digit = Int(text[index]) - Int(UInt8(ascii: "0"))
        guard (0...9).contains(digit) else { return nil }
        value = value * 10 + digit
      }
      return value
    }
    guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
      let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2)
    else { return nil }
    return XMLDate.absoluteTime(
      year: year, month: month, day: day, hour: hour, minute: minute, second: second)
  }
}

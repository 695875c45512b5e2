import Foundation
import PropertyList

extension ArchiverFlattener {
  /// Whether encoding the archive read from `view` (`KeyedArchive(propertyList:)` of its plist,
  /// then `encoded()`, with no class-name sharing read from the bytes) would give back exactly the
  /// bytes the view was read from. Then those bytes are the encoding, and nothing need be decoded,
  /// flattened or written.
  ///
  /// The check walks the plist in the order `State.flatten` does and, for every object it would
  /// append, checks that the input holds that object at that index and position, in the writer's
  /// encoding, and that every reference is the index the flattener would give. It answers false
  /// for anything it does not follow exactly (non-ASCII constants, more than `maximumObjects`
  /// objects): callers then encode as usual.
  static func reproducesBytes(_ view: BinaryPropertyListView) -> Bool {
    var check = CanonicalCheck(view)
    return check.run()
  }

  /// Archives larger than this are encoded rather than checked: the check's lookups are linear.
  static let maximumObjectsChecked = 512
}

/// The state of `ArchiverFlattener.reproducesBytes`: `State` with input indexes in place of built
/// objects.
private struct CanonicalCheck {
  let plist: BinaryPropertyListView
  let bytes: UnsafeRawBufferPointer
  let referenceSize: Int
  // The index the flattener gives its next object, and where the writer puts it.
  var next = 0
  var position = 8
  // Deduplicated constants and scalars, as input object indexes (each its own first occurrence).
  var keyConstants: [Int] = []
  var valueConstants: [Int] = []
  var numbers: [(bits: UInt64, kind: UInt8, index: Int)] = []
  var dates: [(bits: UInt64, index: Int)] = []
  var uids: [(uid: UInt64, index: Int)] = []
  var firstTrue: Int?
  var firstFalse: Int?
  // A reusable buffer for expected encodings.
  var expected: [UInt8] = []

  init(_ plist: BinaryPropertyListView) {
    self.plist = plist
    bytes = plist.rawBytes
    referenceSize = BinaryObjectEncoding.byteCount(UInt64(plist.objectCount))
    expected.reserveCapacity(32)
  }

  mutating func run() -> Bool {
    guard plist.objectCount <= ArchiverFlattener.maximumObjectsChecked,
      bytes.starts(with: "bplist00".utf8), plist.topObjectIndex == 0,
      plist.referenceSize == referenceSize,
      plist.offsetSize == BinaryObjectEncoding.byteCount(UInt64(plist.offsetTableOffset)),
      // The writer's trailer starts with six zero bytes (unused and sort version).
      bytes[(bytes.count - 32)..<(bytes.count - 26)].allSatisfy({ $0 == 0 }),
      walk(plist.topObject, isObjectsEntry: false, isObjectsArray: false)
    else { return false }
    // Every object appended, in the order of the offset table, up to it.
    return next == plist.objectCount && position == plist.offsetTableOffset
  }

  // MARK: Appending

  /// Claims the next index for an object the input holds there: `reference` must be it, and its
  /// bytes must start where the previous object's ended.
  private mutating func claim(_ reference: Int) -> Bool {
    guard reference == next, next < plist.objectCount, plist.offset(next) == position else {
      return false
    }
    return true
  }

  /// Whether the input holds `expected` at `position`; moves past it to the next object.
  private mutating func matchExpected(extra: Int = 0) -> Bool {
    let count = expected.count
    guard position <= plist.offsetTableOffset - count - extra,
      expected.withUnsafeBytes({ memcmp($0.baseAddress!, bytes.baseAddress! + position, count) })
        == 0
    else { return false }
    position += count + extra
    next += 1
    return true
  }

  /// Appends a scalar read from the input object `reference`, which must be the next index.
  private mutating func appendScalar(_ reference: Int) -> Bool {
    guard claim(reference) else { return false }
    return appendEncoding(of: reference)
  }

  /// Appends the writer's encoding of the scalar object `object` at the next index, wherever the
  /// references point (booleans and UIDs are written once per occurrence).
  private mutating func appendEncoding(of object: Int) -> Bool {
    guard next < plist.objectCount, plist.offset(next) == position else { return false }
    expected.removeAll(keepingCapacity: true)
    switch plist.kind(object) {
    case .string where plist.asciiBytes(object) != nil:
      // ASCII text is written as it is: only the marker and count can differ, when the object
      // is the one the input holds here.
      guard object == next, let text = plist.asciiBytes(object) else { return false }
      BinaryObjectEncoding.appendContainerHeader(0x50, count: text.count, to: &expected)
      return matchExpected(extra: text.count)
    case .data:
      guard object == next else { return false }
      let count = plist.count(object)
      BinaryObjectEncoding.appendContainerHeader(0x40, count: count, to: &expected)
      return matchExpected(extra: count)
    default:
      guard let value = plist.scalar(object) else { return false }
      BinaryObjectEncoding.appendScalar(value, to: &expected)
      return matchExpected()
    }
  }

  /// Appends a container's marker and count; its references are checked as its children are.
  private mutating func appendContainer(_ reference: Int, marker: UInt8, references: Int) -> Bool {
    guard claim(reference) else { return false }
    expected.removeAll(keepingCapacity: true)
    BinaryObjectEncoding.appendContainerHeader(marker, count: plist.count(reference), to: &expected)
    let (size, overflow) = references.multipliedReportingOverflow(by: referenceSize)
    return !overflow && matchExpected(extra: size)
  }

  // MARK: The flattener's walk

  /// `State.flatten` of the object `reference` names: whether it gives that index.
  private mutating func walk(_ reference: Int, isObjectsEntry: Bool, isObjectsArray: Bool) -> Bool {
    switch plist.kind(reference) {
    case .string:
      if isObjectsEntry { return appendScalar(reference) }
      return constant(reference, isKey: false)
    case .integer:
      let integer = plist.integer(reference)
      return number(
        reference, bits: integer.bitPattern, kind: integer.needsUnsignedStorage ? 1 : 0)
    case .real:
      let value = plist.real(reference).value
      return number(
        reference, bits: value.isNaN ? Double.nan.bitPattern : value == 0 ? 0 : value.bitPattern,
        kind: 2)
    case .date:
      guard case .date(let date)? = plist.scalar(reference) else { return false }
      let bits = date.timeIntervalSinceReferenceDate.bitPattern
      if let first = dates.first(where: { $0.bits == bits }) { return first.index == reference }
      dates.append((bits, next))
      return appendScalar(reference)
    case .data:
      return appendScalar(reference)
    case .boolean:
      // Every occurrence is written; references resolve to the first.
      let flag = plist.boolean(reference)
      let first = (flag ? firstTrue : firstFalse) ?? next
      if flag { firstTrue = first } else { firstFalse = first }
      return first == reference && appendEncoding(of: reference)
    case .uid:
      let uid = plist.uid(reference)
      let first = uids.first(where: { $0.uid == uid })?.index ?? next
      if first == next { uids.append((uid, next)) }
      return first == reference && appendEncoding(of: reference)
    case .array:
      let count = plist.count(reference)
      guard appendContainer(reference, marker: 0xA0, references: count) else { return false }
      for position in 0..<count
      where !walk(
        plist.element(reference, position), isObjectsEntry: isObjectsArray,
        isObjectsArray: false)
      {
        return false
      }
      return true
    case .dictionary:
      return dictionary(reference, isObjectsEntry: isObjectsEntry)
    }
  }

  private mutating func dictionary(_ reference: Int, isObjectsEntry: Bool) -> Bool {
    let count = plist.count(reference)
    let (references, overflow) = count.multipliedReportingOverflow(by: 2)
    guard !overflow, appendContainer(reference, marker: 0xD0, references: references) else {
      return false
    }
    let isTopLevel = reference == 0
    for position in 0..<count where !constant(plist.key(reference, position), isKey: true) {
      return false
    }
    var unsharedClassName: Int?
    if isObjectsEntry, let name = plist.value(reference, forKey: "$classname"),
      plist.isKind(name, .string), plist.value(reference, forKey: "$classes") != nil,
      !ArchiverFlattener.sharedClassNames.contains(plist.string(name))
    {
      unsharedClassName = name
    }
    for position in 0..<count {
      let key = plist.key(reference, position)
      let value = plist.value(reference, position)
      if let name = unsharedClassName, plist.isString(key, equalTo: "$classname") {
        // A class name of its own, not the constant.
        guard value == name, appendScalar(value) else { return false }
        continue
      }
      guard
        walk(
          value, isObjectsEntry: false,
          isObjectsArray: isTopLevel && plist.isString(key, equalTo: "$objects"))
      else { return false }
    }
    return true
  }

  /// `State.constant`: strings shared by their text, keys apart from values. Only ASCII text is
  /// followed (Swift's string equality, which the flattener's lookup uses, is then byte equality).
  private mutating func constant(_ reference: Int, isKey: Bool) -> Bool {
    guard let text = plist.asciiBytes(reference) else { return false }
    let known = isKey ? keyConstants : valueConstants
    for first in known {
      guard let other = plist.asciiBytes(first), other.count == text.count,
        memcmp(other.baseAddress!, text.baseAddress!, text.count) == 0
      else { continue }
      return first == reference
    }
    if isKey { keyConstants.append(reference) } else { valueConstants.append(reference) }
    return appendScalar(reference)
  }

  /// `State.number`: integers and reals shared by value and kind.
  private mutating func number(_ reference: Int, bits: UInt64, kind: UInt8) -> Bool {
    if let first = numbers.first(where: { $0.bits == bits && $0.kind == kind }) {
      return first.index == reference
    }
    numbers.append((bits, kind, next))
    return appendScalar(reference)
  }
}

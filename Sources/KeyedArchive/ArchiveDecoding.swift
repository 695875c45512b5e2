import PortableFoundation
import PropertyList

extension KeyedArchive {
  /// Decodes the root object into typed values.
  ///
  /// - Throws: ``KeyedArchiveError`` with the key path of the first problem: an object that
  ///   contains itself (`.cycle`), a Foundation object without the fields its class requires
  ///   (`.badObject`), or a graph deeper or larger than `limits` allows (`.limitExceeded`).
  public func decodeRoot(limits: KeyedArchiveLimits = .default) throws -> ArchivedValue {
    try decodeRootCountingInstances(reusing: true, limits: limits).result.get()
  }

  /// The root decoded reusing each shared instance decoded (`decodeRoot(limits:)`), or with
  /// `reusing` false expanding every reference, as decoding did before it reused them (it must give
  /// the same value or throw the same error, key path included; tests and the fuzzer compare the
  /// two); and how many instances it decoded (an instance reused counts nothing): the work decoding
  /// did, which tests count instead of timing it.
  @_spi(Differential)
  public func decodeRootCountingInstances(reusing: Bool, limits: KeyedArchiveLimits = .default)
    -> (result: Result<ArchivedValue, KeyedArchiveError>, decodedInstances: Int)
  {
    var decoder = ArchiveDecoder(archive: self, limits: limits)
    decoder.reusesDecoded = reusing
    do {
      return (.success(try decoder.decode(rootUID, at: .top(rootKey))), decoder.decodedInstances)
    } catch let error as KeyedArchiveError {
      return (.failure(error), decoder.decodedInstances)
    } catch {
      // Unreachable: the decoder throws nothing else (its throws are untyped).
      return (.failure(KeyedArchiveError(.badObject, "\(error)", at: "")), decoder.decodedInstances)
    }
  }

  /// Decodes the object a UID names into typed values.
  ///
  /// - Throws: ``KeyedArchiveError`` as `decodeRoot` does.
  public func decodeValue(_ uid: UInt64, limits: KeyedArchiveLimits = .default) throws
    -> ArchivedValue
  {
    var decoder = ArchiveDecoder(archive: self, limits: limits)
    return try decoder.decode(uid, at: .object(uid))
  }
}

/// One step of a key path.
enum KeyPathStep {
  case top(String)
  case object(UInt64)
  case key(String)
  case index(Int)

  /// Renders steps as `$top.root.NS.objects[2].NS.relative` (or from `$objects[N]`).
  static func render(_ steps: [KeyPathStep]) -> String {
    var text = ""
    for step in steps {
      switch step {
      case .top(let key): text += "$top.\(key)"
      case .object(let uid): text += "$objects[\(uid)]"
      case .key(let name): text += ".\(name)"
      case .index(let position): text += "[\(position)]"
      }
    }
    return text
  }
}

extension KeyedArchiveError {
  /// The same error with `step` in front of its key path, as it passes up one level.
  func below(_ step: KeyPathStep) -> KeyedArchiveError {
    var error = self
    error.keyPath = KeyPathStep.render([step]) + keyPath
    return error
  }
}

// Shared objects are decoded once. `maximumVisits` still counts each reference to a shared object
// as visits of everything below it, and errors are the same, key path included, as when each
// reference decodes the object again:
//
// - An instance decoded without error is kept with the visits it took and how many levels it nests
//   below the depth it was met at. Neither depends on where it is met again: the visits are a
//   count over the graph below it, and a cycle through it would have failed its first decoding
//   (if its graph reached an instance being decoded now, that instance's graph reaches it, and
//   decoding either one meets the other inside itself).
// - Met again where its visits or its levels would pass a limit, it is decoded again, so that the
//   error comes from the same object, with the same key path, as without the reuse. Only the
//   objects on the way to the error are decoded again; the others are still reused.
//
// So an archive of n objects that shares them exponentially costs O(n) decodings and a lookup per
// reference, not up to `maximumVisits` decodings (a 1.2 KB archive took half a second).
struct ArchiveDecoder {
  let archive: KeyedArchive
  let limits: KeyedArchiveLimits
  var visits = 0
  var depth = 0
  // The deepest `depth` reached so far, from which each instance's levels are taken.
  var deepest = 0
  // The instances being decoded (a short stack: it is as deep as the references).
  var inProgress: [UInt64] = []
  // Instances decoded without error, by UID.
  var decoded: [UInt64: Decoded] = [:]
  // False only to compare with the decoder that expands every reference.
  var reusesDecoded = true
  // Instances decoded (not reused), for tests.
  var decodedInstances = 0

  /// An instance decoded, with the visits its decoding counted (itself included) and the levels it
  /// nests below the depth it was met at (one for an instance referencing nothing).
  struct Decoded {
    let value: ArchivedValue
    let visits: Int
    let levels: Int
  }

  init(archive: KeyedArchive, limits: KeyedArchiveLimits) {
    self.archive = archive
    self.limits = limits
  }

  // Errors are thrown with the key path below the object being decoded, and each level prefixes
  // its own step as the error passes through, so that nothing is spent on paths unless an error
  // needs one.
  func here(_ extra: KeyPathStep...) -> String {
    KeyPathStep.render(extra)
  }

  /// Decodes the object `uid` names, one step below the current object.
  mutating func decode(_ uid: UInt64, at step: KeyPathStep) throws -> ArchivedValue {
    do {
      return try decode(uid)
    } catch let error as KeyedArchiveError {
      throw error.below(step)
    }
  }

  mutating func decode(_ uid: UInt64) throws -> ArchivedValue {
    let object = try archive.object(uid, at: here())
    // UID 0 is nil, as NSKeyedUnarchiver reads it, whatever object 0 is.
    if uid == 0 { return .null }
    // `maximumVisits - visits` cannot overflow: an instance is known only once a decoding within the
    // limit has ended, and `visits` never passes the limit without a throw.
    if let known = decoded[uid], known.visits <= limits.maximumVisits - visits,
      depth + known.levels <= limits.effectiveMaximumDepth
    {
      visits += known.visits
      deepest = max(deepest, depth + known.levels)
      return known.value
    }
    visits += 1
    guard visits <= limits.maximumVisits else {
      throw KeyedArchiveError(
        .limitExceeded,
        "more than \(limits.maximumVisits) objects visited (objects shared exponentially?)",
        at: here())
    }
    switch object {
    case .string(let string):
      return .string(string)
    case .integer(let integer): return .integer(integer)
    case .real(let real): return .real(real)
    case .boolean(let flag): return .boolean(flag)
    case .data(let data): return .data(data)
    case .date(let date): return .date(date)
    case .dictionary(let fields):
      guard case .uid(let classUID)? = fields["$class"] else {
        throw KeyedArchiveError(
          .badObject, "is a dictionary without $class, not an object", at: here())
      }
      guard !inProgress.contains(uid) else {
        throw KeyedArchiveError(.cycle, "object \(uid) contains itself", at: here())
      }
      depth += 1
      guard depth <= limits.effectiveMaximumDepth else {
        throw KeyedArchiveError(
          .limitExceeded,
          "references nest deeper than the limit of \(limits.effectiveMaximumDepth)",
          at: here())
      }
      inProgress.append(uid)
      decodedInstances += 1
      let visitsBefore = visits - 1
      let deepestOutside = deepest
      deepest = depth
      defer {
        inProgress.removeLast()
        depth -= 1
      }
      // The chain itself is only needed for classes without a model of their own.
      let className = try archive.mostDerivedClassName(classUID, at: here(.key("$class")))
      let value = try decodeInstance(fields, className: className, classUID: classUID)
      if reusesDecoded {
        decoded[uid] = Decoded(
          value: value, visits: visits - visitsBefore, levels: deepest - (depth - 1))
      }
      deepest = max(deepest, deepestOutside)
      return value
    case .array, .uid:
      throw KeyedArchiveError(
        .badObject, "object \(uid) is a bare \(object.typeName), which no archiver writes",
        at: here())
    }
  }

  private mutating func decodeInstance(
    _ fields: PropertyListDictionary, className: String, classUID: UInt64
  ) throws -> ArchivedValue {
    switch className {
    case "NSArray", "NSMutableArray":
      return .array(try references(fields, "NS.objects"), mutable: className == "NSMutableArray")
    case "NSSet", "NSMutableSet":
      return .set(try references(fields, "NS.objects"), mutable: className == "NSMutableSet")
    case "NSDictionary", "NSMutableDictionary":
      let keys = try references(fields, "NS.keys")
      let values = try references(fields, "NS.objects")
      guard keys.count == values.count else {
        throw KeyedArchiveError(
          .badObject, "has \(keys.count) keys but \(values.count) objects",
          at: here(.key("NS.keys")))
      }
      return .dictionary(
        zip(keys, values).map(ArchivedDictionaryEntry.init),
        mutable: className == "NSMutableDictionary")
    case "NSString", "NSMutableString":
      guard case .string(let string)? = try optionalReferenceOrInline(fields, "NS.string") else {
        throw KeyedArchiveError(.badObject, "has no string NS.string", at: here(.key("NS.string")))
      }
      return .string(string, mutable: className == "NSMutableString")
    case "NSData", "NSMutableData":
      guard case .data(let data)? = try optionalReferenceOrInline(fields, "NS.data") else {
        throw KeyedArchiveError(.badObject, "has no data NS.data", at: here(.key("NS.data")))
      }
      return .data(data, mutable: className == "NSMutableData")
    case "NSDate":
      switch fields["NS.time"] {
      case .real(let real)?: return .date(Date(timeIntervalSinceReferenceDate: real.value))
      case .integer(let integer)?:
        let seconds = integer.int64Value.map(Double.init) ?? Double(integer.uint64Value ?? 0)
        return .date(Date(timeIntervalSinceReferenceDate: seconds))
      default:
        throw KeyedArchiveError(.badObject, "has no number NS.time", at: here(.key("NS.time")))
      }
    case "NSURL":
      guard case .string(let relative)? = try optionalReferenceOrInline(fields, "NS.relative")
      else {
        throw KeyedArchiveError(
          .badObject, "has no string NS.relative", at: here(.key("NS.relative")))
      }
      var base: ArchivedValue?
      if case .uid(let baseUID)? = fields["NS.base"], !archive.isNull(baseUID) {
        base = try decode(baseUID, at: .key("NS.base"))
        guard case .url? = base else {
          throw KeyedArchiveError(.badObject, "is not a URL", at: here(.key("NS.base")))
        }
      }
      return .url(ArchivedURL(relative: relative, base: base))
    case "NSUUID":
      guard case .data(let bytes)? = fields["NS.uuidbytes"], bytes.count == 16 else {
        throw KeyedArchiveError(
          .badObject, "has no 16-byte NS.uuidbytes", at: here(.key("NS.uuidbytes")))
      }
      let b = Array(bytes)
      return .uuid(
        UUID(
          uuid: (
            b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
            b[14], b[15]
          )))
    case "NSNull":
      return .nsNull
    default:
      let chain = try archive.classChain(classUID, at: here(.key("$class")))
      var decoded = [ArchivedField]()
      decoded.reserveCapacity(fields.count)
      for (key, value) in fields where key != "$class" {
        do {
          decoded.append(ArchivedField(key, try field(value)))
        } catch let error as KeyedArchiveError {
          throw error.below(.key(key))
        }
      }
      return .object(ArchivedObject(classChain: chain, fields: decoded))
    }
  }

  private mutating func field(_ value: PropertyListValue) throws -> ArchivedField.Value {
    switch value {
    case .uid(let uid):
      return .reference(try decode(uid))
    case .array(let elements)
    where !elements.isEmpty && elements.allSatisfy({ $0.uidValue != nil }):
      var decoded = [ArchivedValue]()
      decoded.reserveCapacity(elements.count)
      for (index, element) in elements.enumerated() {
        decoded.append(try decode(element.uidValue!, at: .index(index)))
      }
      return .references(decoded)
    default:
      return .inline(value)
    }
  }

  /// An inline array of UIDs, each decoded.
  private mutating func references(_ fields: PropertyListDictionary, _ key: String) throws
    -> [ArchivedValue]
  {
    guard case .array(let elements)? = fields[key] else {
      throw KeyedArchiveError(.badObject, "is missing or not an array", at: here(.key(key)))
    }
    var decoded = [ArchivedValue]()
    decoded.reserveCapacity(elements.count)
    for (index, element) in elements.enumerated() {
      guard case .uid(let uid) = element else {
        throw KeyedArchiveError(
          .badObject, "is a \(element.typeName), not a UID", at: here(.key(key), .index(index)))
      }
      do {
        decoded.append(try decode(uid, at: .index(index)))
      } catch let error as KeyedArchiveError {
        throw error.below(.key(key))
      }
    }
    return decoded
  }

  /// A field that is either a reference to a plain object or the value inline.
  private mutating func optionalReferenceOrInline(_ fields: PropertyListDictionary, _ key: String)
    throws
    -> PropertyListValue?
  {
    switch fields[key] {
    // UID 0 is nil, as everywhere else, not the string "$null" that object 0 holds.
    case .uid(0)?: return nil
    case .uid(let uid)?: return try archive.object(uid, at: here(.key(key)))
    case let value?: return value
    case nil: return nil
    }
  }
}

import PortableFoundation
import PropertyList

/// One node of an archive's object graph resolved into a tree for display.
///
/// Each instance is expanded once, where it is first met; later references to it are `.reference`
/// nodes, and a reference back to an instance being expanded is a `.reference` marked as a cycle.
/// Plain values (strings, numbers, data) are repeated where referenced. So the tree stays within
/// the archive's size times its fan-out, however its objects share one another.
public indirect enum ResolvedNode: Sendable, Hashable {
  /// `$null`.
  case null
  /// A plain value (string, number, data, date, boolean), with the UID of its object when it is one.
  case value(PropertyListValue, uid: UInt64?)
  /// An instance: its UID, class chain, and fields in archived order.
  case object(uid: UInt64, classChain: [String], fields: [ResolvedField])
  /// An inline array (of references or values).
  case list([ResolvedNode])
  /// An inline dictionary.
  case dictionary([ResolvedField])
  /// A data value that is itself a keyed archive, resolved.
  case nestedArchive(
    data: Data, uid: UInt64?, archiver: String, rootKey: String, root: ResolvedNode)
  /// An object already shown above, or (`isCycle`) one that contains itself.
  case reference(uid: UInt64, isCycle: Bool)
  /// Where a budget ran out: the rest of this branch is not shown.
  case truncated(String)
}

/// A key and its resolved value.
public struct ResolvedField: Sendable, Hashable {
  /// The key.
  public var key: String
  /// The value.
  public var node: ResolvedNode

  /// Creates a field.
  public init(_ key: String, _ node: ResolvedNode) {
    self.key = key
    self.node = node
  }
}

extension KeyedArchive {
  /// Resolves the graph from the root into a tree for display, within `limits` (depth of references,
  /// objects visited); nested archives in data values are resolved too, up to `nestingLimit` deep.
  public func resolve(limits: KeyedArchiveLimits = .default, nestingLimit: Int = 4) -> ResolvedNode
  {
    var resolver = ArchiveResolver(archive: self, limits: limits, nestingLimit: nestingLimit)
    return resolver.resolve(rootUID)
  }
}

struct ArchiveResolver {
  let archive: KeyedArchive
  let limits: KeyedArchiveLimits
  let nestingLimit: Int
  var shown = Set<UInt64>()
  var inProgress = Set<UInt64>()
  var visits = 0
  var depth = 0

  init(archive: KeyedArchive, limits: KeyedArchiveLimits, nestingLimit: Int) {
    self.archive = archive
    self.limits = limits
    self.nestingLimit = nestingLimit
  }

  mutating func resolve(_ uid: UInt64) -> ResolvedNode {
    if uid == 0 || archive.isNull(uid) { return .null }
    guard let object = try? archive.object(uid) else {
      return .truncated("UID \(uid) names no object")
    }
    visits += 1
    guard visits <= limits.maximumVisits else {
      return .truncated("more than \(limits.maximumVisits) objects")
    }
    switch object {
    case .dictionary(let fields):
      // Instances are expanded once; plain values are cheap to repeat, and clearer repeated.
      if inProgress.contains(uid) { return .reference(uid: uid, isCycle: true) }
      if shown.contains(uid) { return .reference(uid: uid, isCycle: false) }
      shown.insert(uid)
      guard depth < limits.effectiveMaximumDepth else {
        return .truncated("references nest deeper than \(limits.effectiveMaximumDepth)")
      }
      depth += 1
      inProgress.insert(uid)
      defer {
        inProgress.remove(uid)
        depth -= 1
      }
      let chain = fields["$class"]?.uidValue.flatMap { try? archive.classChain($0, at: "") } ?? []
      var resolved = [ResolvedField]()
      for (key, value) in fields where key != "$class" {
        resolved.append(ResolvedField(key, inline(value)))
      }
      return .object(uid: uid, classChain: chain, fields: resolved)
    default:
      return scalar(object, uid: uid)
    }
  }

  mutating func inline(_ value: PropertyListValue) -> ResolvedNode {
    switch value {
    case .uid(let uid): return resolve(uid)
    case .array(let elements): return .list(elements.map { inline($0) })
    case .dictionary(let fields):
      return .dictionary(fields.map { ResolvedField($0.key, inline($0.value)) })
    default: return scalar(value, uid: nil)
    }
  }

  mutating func scalar(_ value: PropertyListValue, uid: UInt64?) -> ResolvedNode {
    guard case .data(let data) = value, nestingLimit > 0, data.starts(with: Array("bplist00".utf8)),
      let nested = try? KeyedArchive(decoding: data, limits: limits)
    else { return .value(value, uid: uid) }
    var inner = ArchiveResolver(archive: nested, limits: limits, nestingLimit: nestingLimit - 1)
    inner.visits = visits
    let root = inner.resolve(nested.rootUID)
    visits = inner.visits
    return .nestedArchive(
      data: data, uid: uid, archiver: nested.archiver ?? "", rootKey: nested.rootKey, root: root)
  }
}

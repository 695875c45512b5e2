import KeyedArchive
import PortableFoundation
@_spi(InPlace) @_spi(Writing) import PropertyList

// How decoding reads a blob's root (see ResumeData.swift): a keyed archive's root dictionary
// parted into plain and archived values, a Network.framework root checked to be one, and the
// generation told from the contents.

extension ResumeData {
  /// A keyed blob's archive and root dictionary, or nil to read the dictionary as a plain one:
  /// CFNetwork falls back that way when the keyed decode fails. A dictionary that holds no resume
  /// key is not resume data, and then the archive's error says why.
  static func keyed(
    _ plist: PropertyListValue, format: PropertyListFormat, top: PropertyListDictionary,
    limits: KeyedArchiveLimits
  ) throws -> (
    archive: KeyedArchive, plain: PropertyListDictionary, archived: [String: ArchivedValue],
    order: [String], mutable: Bool
  )? {
    do {
      let archive = try KeyedArchive(propertyList: plist, format: format)
      let root = try rootDictionary(archive, limits: limits)
      return (archive, root.plain, root.archived, root.order, root.mutable)
    } catch let error as KeyedArchiveError {
      guard holdsResumeKeys(top) else {
        throw ResumeDataError(
          .keyedArchive, error.message, at: error.keyPath, keyedArchiveError: error)
      }
      return nil
    }
  }

  static func archive(_ data: Data, limits: KeyedArchiveLimits) throws -> KeyedArchive {
    do {
      return try KeyedArchive(decoding: data, limits: limits)
    } catch let error as KeyedArchiveError {
      if let plist = error.propertyListError {
        throw ResumeDataError(.propertyList, plist.message, at: "", propertyListError: plist)
      }
      throw ResumeDataError(
        .keyedArchive, error.message, at: error.keyPath, keyedArchiveError: error)
    }
  }

  static func networkFrameworkRoot(_ archive: KeyedArchive, limits: KeyedArchiveLimits)
    throws
    -> ArchivedObject
  {
    // The class is checked before the graph is decoded: a root of another class may share its
    // objects exponentially, and would cost up to `limits.maximumVisits` before being refused.
    if let chain = archive.classChain(ofObject: archive.rootUID),
      !chain.contains(where: { $0.hasPrefix("NWURLSession") })
    {
      throw notNetworkFrameworkRoot(archive)
    }
    let root: ArchivedValue
    do {
      root = try archive.decodeRoot(limits: limits)
    } catch let error as KeyedArchiveError {
      throw ResumeDataError(
        .keyedArchive, error.message, at: error.keyPath, keyedArchiveError: error)
    }
    guard case .object(let object) = root,
      object.classChain.contains(where: { $0.hasPrefix("NWURLSession") })
    else {
      throw notNetworkFrameworkRoot(archive)
    }
    return object
  }

  private static func notNetworkFrameworkRoot(_ archive: KeyedArchive) -> ResumeDataError {
    ResumeDataError(
      .notResumeData, "the masked archive's root is not an NWURLSessionResumeInfo",
      at: "$top.\(archive.rootKey)")
  }

  /// The root dictionary of a keyed blob: plain values, and the rest decoded.
  private static func rootDictionary(_ archive: KeyedArchive, limits: KeyedArchiveLimits) throws
    -> (
      plain: PropertyListDictionary, archived: [String: ArchivedValue], order: [String],
      mutable: Bool
    )
  {
    // As for Network.framework roots: the class first, then the graph.
    if let chain = archive.classChain(ofObject: archive.rootUID),
      chain.first != "NSDictionary" && chain.first != "NSMutableDictionary"
    {
      throw notADictionary(archive)
    }
    guard case .dictionary(let pairs, let mutable) = try archive.decodeRoot(limits: limits) else {
      throw notADictionary(archive)
    }
    let split = try Self.split(pairs, rootKey: archive.rootKey)
    return (split.plain, split.archived, split.order, mutable)
  }

  private static func notADictionary(_ archive: KeyedArchive) -> KeyedArchiveError {
    KeyedArchiveError(.badObject, "the root is not a dictionary", at: "$top.\(archive.rootKey)")
  }

  /// A root dictionary's entries parted into plain values and the rest, with the keys' order.
  private static func split(_ pairs: [ArchivedDictionaryEntry], rootKey: @autoclosure () -> String)
    throws -> (plain: PropertyListDictionary, archived: [String: ArchivedValue], order: [String])
  {
    var plain = PropertyListDictionary()
    var archived = [String: ArchivedValue]()
    var order = [String]()
    for (index, pair) in pairs.enumerated() {
      guard case .string(let key, _) = pair.key else {
        throw KeyedArchiveError(
          .badObject, "key \(index) is not a string",
          at: "$top.\(rootKey()).NS.keys[\(index)]")
      }
      // `archivedEntries` is keyed by `String`, which takes two keys that differ only in Unicode
      // normalization for one; NSDictionary keeps both. Refused, rather than one of them dropped.
      func clash(with other: String) -> KeyedArchiveError {
        KeyedArchiveError(
          .badObject,
          "keys \(String(reflecting: other)) and \(String(reflecting: key)) differ only in Unicode normalization; this library cannot keep both when one holds an object",
          at: "$top.\(rootKey()).NS.keys[\(index)]")
      }
      if let held = archived.index(forKey: key),
        !PropertyListDictionary.sameBytes(archived[held].key, key)
      {
        throw clash(with: archived[held].key)
      }
      if plain[key] != nil || archived[key] != nil {
        // A repeated key: the last value wins, as NSDictionary's decoding does, and stands in
        // the last one's place, in the plain entries (removed and added again) and so in the
        // order the root is archived in, which must be theirs: reading the archive written back
        // then gives the same entries in the same order.
        plain[key] = nil
        archived[key] = nil
        order.removeAll { PropertyListDictionary.sameBytes($0, key) }
      }
      order.append(key)
      switch pair.value {
      case .string(let string, false): plain[key] = .string(string)
      case .integer(let integer): plain[key] = .integer(integer)
      case .real(let real): plain[key] = .real(real)
      case .boolean(let flag): plain[key] = .boolean(flag)
      case .data(let data, false): plain[key] = .data(data)
      default:
        if let other = plain.entries.first(where: {
          $0.key == key && !PropertyListDictionary.sameBytes($0.key, key)
        }) {
          throw clash(with: other.key)
        }
        archived[key] = pair.value
      }
    }
    return (plain, archived, order)
  }

  /// A root dictionary's plain entries and their keys' order, as `split` parts them (all plain,
  /// none archived), when no key repeats; nil otherwise. `distinct` says the keys are already known
  /// not to repeat (resume keys, each once), and then they are not compared again.
  static func splitPlain(_ entries: [PropertyListDictionary.Element], distinct: Bool) -> (
    plain: PropertyListDictionary, order: [String]
  )? {
    if distinct { return (PropertyListDictionary(uniqueKeys: entries), entries.map(\.key)) }
    var order = [String]()
    order.reserveCapacity(entries.count)
    // Through the buffer: each key is read in place, rather than copied out of its entry along
    // with (and retaining) the entry's value.
    let unique = entries.withUnsafeBufferPointer { entries in
      for position in entries.indices {
        // A handful of keys: comparing them pairwise is cheaper than hashing.
        let length = entries[position].key.utf8.count
        for earlier in order
        where earlier.utf8.count == length
          && PropertyListDictionary.sameBytes(earlier, entries[position].key)
        {
          return false
        }
        order.append(entries[position].key)
      }
      return true
    }
    guard unique else { return nil }
    return (PropertyListDictionary(uniqueKeys: entries), order)
  }

  /// Whether a keyed blob's dictionary is in Safari's shape: a `LocalPath`, and neither an
  /// original request nor a temp file name.
  static func isSafariShaped(_ dictionary: PropertyListDictionary) -> Bool {
    dictionary[ResumeDataKey.localPath] != nil
      && dictionary[ResumeDataKey.originalRequest] == nil
      && dictionary[ResumeDataKey.tempFileName] == nil
  }

  static func holdsResumeKeys(_ dictionary: PropertyListDictionary) -> Bool {
    dictionary.entries.contains { ResumeDataKey.isKnown($0.key) }
  }

  /// v1, v2 or v4 from the contents: the info version when it names one, else the partial-file key.
  static func plainGeneration(_ dictionary: PropertyListDictionary) -> ResumeDataGeneration {
    switch dictionary[ResumeDataKey.infoVersion]?.int64Value {
    case 1?: return .v1
    case 2?: return .v2
    case 3?, 4?, 5?: return .v4
    default:
      if dictionary[ResumeDataKey.byteRange] != nil { return .v4 }
      if dictionary[ResumeDataKey.tempFileName] != nil { return .v2 }
      return .v1
    }
  }
}

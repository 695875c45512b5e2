import KeyedArchive
import PortableFoundation
import PropertyList

/// A resume blob made again from the description of its dictionary (what `NSLog` or the
/// debugger print of it, OpenStep text in which every value is a string or data): the known keys
/// get their types back, and the dictionary is written as the generation its keys say it came
/// from.
///
/// The description keeps neither the container nor the key order; both are chosen as CFNetwork
/// writes them: v1, v2 and v4 as XML with sorted keys (what the devices wrote), the keyed
/// generations as a binary NSKeyedArchiver archive of an NSMutableDictionary under
/// `NSKeyedArchiveRootObjectKey`, keys in CFNetwork's order (``ResumeDataKey``), then the others
/// sorted.
enum DescriptionRecovery {
  /// Keys whose values are integers in a blob, which a description shows bare.
  static let integerKeys: Set<String> = [ResumeDataKey.bytesReceived, ResumeDataKey.infoVersion]
  /// Keys whose values are data in a blob, which a description shows as `<…>`.
  static let dataKeys: Set<String> = [
    ResumeDataKey.currentRequest, ResumeDataKey.originalRequest, ResumeDataKey.response,
    "ResumePlaceholderURLBookmarkData", "data",
  ]
  /// Keys only the keyed generations write.
  static let keyedOnlyKeys: Set<String> = [
    ResumeDataKey.response, "NSURLSessionResumeExtractor", "PublishingURL",
    "ResumePlaceholderURLBookmarkData",
  ]

  static func recover(_ described: PropertyListDictionary, generation: ResumeDataGeneration?)
    throws -> CapturedBlob
  {
    let isWebKit =
      described[ResumeDataKey.localPath] != nil
      && described["data"]?.dataValue.map(NetworkFrameworkMask.isMasked) == true
    guard ResumeData.holdsResumeKeys(described) || isWebKit else {
      throw ResumeDataError(
        .notABlob,
        "an OpenStep dictionary that holds none of the resume-data keys (keys: \(described.keys.prefix(8).joined(separator: ", "))), not the description of a resume dictionary",
        at: "")
    }
    var entries = PropertyListDictionary()
    var retyped = [String]()
    for (key, value) in described {
      if integerKeys.contains(key) {
        guard case .string(let text) = value, let number = Int64(text) else {
          throw ResumeDataError(
            .wrongType,
            "\(describe(value)) where the blob holds a whole number", at: key)
        }
        entries[key] = .integer(PropertyListInteger(number))
        retyped.append(key)
      } else if dataKeys.contains(key) {
        guard case .data = value else {
          throw ResumeDataError(
            .wrongType,
            "\(describe(value)) where the blob holds data (a description shows it as <62706c69 …>)",
            at: key)
        }
        entries[key] = value
      } else {
        entries[key] = value
      }
    }
    let chosen = generation ?? pick(entries, isWebKit: isWebKit)
    let bytes: Data
    let layout: String
    switch chosen {
    case .v1, .v2, .v4:
      bytes = try ResumeDataError.wrapping {
        try PropertyListValue.dictionary(
          PropertyListDictionary(entries.sortedEntries.map { ($0.key, $0.value) })
        )
        .encoded(as: .xml)
      }
      layout = "XML, keys sorted, as CFNetwork wrote \(chosen.rawValue) blobs"
    case .keyed, .safari, .networkFrameworkWebKit:
      let order = ResumeDataKey.all.filter { entries[$0] != nil }
      let rest = entries.sortedEntries.map(\.key).filter { !ResumeDataKey.isKnown($0) }
      let pairs = (order + rest).map {
        ArchivedDictionaryEntry(.string($0), ResumeData.archived(entries[$0]!))
      }
      bytes = try ResumeDataError.wrapping { try ResumeData.keyedBytes(pairs) }
      layout =
        "a binary NSKeyedArchiver archive of an NSMutableDictionary, as CFNetwork writes it since iOS 12, keys in CFNetwork's order (the description does not keep it)"
    case .networkFramework:
      throw ResumeDataError(
        .unsupported,
        "a dictionary's description cannot be written as a Network.framework blob (its root is an object, not a dictionary)",
        at: "")
    }
    // What was written must read (a description can give a known key a value of the wrong
    // shape); it is named by the generation it reads as.
    let written = try ResumeData(decoding: bytes)
    let why =
      generation != nil
      ? "as asked"
      : reason(for: chosen, entries, isWebKit: isWebKit)
    let integers =
      retyped.isEmpty ? "" : "; \(retyped.joined(separator: " and ")) made integers again"
    let finding = Finding(
      "recovered-from-description", .info,
      "recovered from a description of the resume dictionary: written as a \(written.generation.rawValue) blob (\(why)) in \(layout)\(integers)"
    )
    return CapturedBlob(
      bytes: bytes, form: .description,
      detail: "the description of the resume dictionary (as NSLog prints it), recovered",
      findings: [finding])
  }

  /// The generation the keys say the dictionary came from.
  static func pick(_ entries: PropertyListDictionary, isWebKit: Bool) -> ResumeDataGeneration {
    if isWebKit { return .networkFrameworkWebKit }
    let keyedOnly = entries.keys.contains { keyedOnlyKeys.contains($0) }
    let safariShaped = ResumeData.isSafariShaped(entries)
    switch entries[ResumeDataKey.infoVersion]?.int64Value {
    case 1?: return .v1
    case 2?: return .v2
    case 3?, 4?:
      if safariShaped { return .safari }
      return keyedOnly ? .keyed : .v4
    case .some(let version) where version >= 5:
      return safariShaped ? .safari : .keyed
    default:
      if keyedOnly { return safariShaped ? .safari : .keyed }
      return ResumeData.plainGeneration(entries)
    }
  }

  static func reason(
    for generation: ResumeDataGeneration, _ entries: PropertyListDictionary, isWebKit: Bool
  ) -> String {
    let version = entries[ResumeDataKey.infoVersion]?.int64Value
    switch generation {
    case .networkFrameworkWebKit: return "data and LocalPath: WebKit's wrapper"
    case .safari: return "LocalPath without TempFileName or OriginalRequest: Safari's"
    case .v4 where version == 4:
      return
        "InfoVersion 4; iOS 12 wrote that number too, as a keyed archive: convert --to keyed if the blob came from iOS 12"
    case .keyed where version.map({ $0 >= 5 }) ?? false: return "InfoVersion \(version!)"
    case .keyed: return "keys only the keyed generations write"
    default: return version.map { "InfoVersion \($0)" } ?? "its partial-file key"
    }
  }

  static func describe(_ value: PropertyListValue) -> String {
    switch value {
    case .string(let text): return "the string \"\(text.prefix(40))\""
    default: return "a value of type \(value.typeName)"
    }
  }
}

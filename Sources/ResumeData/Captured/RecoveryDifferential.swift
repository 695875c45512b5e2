@_spi(Differential) import KeyedArchive
import PortableFoundation
import PropertyList

@_spi(Differential)
extension ResumeDifferential {
  /// Where a blob recovered from a description of `original`'s dictionary differs from
  /// `original`: nil when both have the same generation, entries (as a set: a description keeps
  /// no order), typed fields, requests and findings; and, when `original` is in the container
  /// recovery writes that generation in (XML for v1, v2 and v4, a binary keyed archive for the
  /// others), the same keys in the same order. The container itself is not compared: a
  /// description does not show it.
  public static func recoveryDifference(_ recovered: ResumeData, _ original: ResumeData)
    -> String?
  {
    if recovered.generation != original.generation {
      return "generation \(recovered.generation.rawValue), not \(original.generation.rawValue)"
    }
    let sorted = { (blob: ResumeData) in
      blob.entries.sortedEntries.map { "\($0.key)=\($0.value)" }
    }
    if sorted(recovered) != sorted(original) { return "entries" }
    for (name, left, right) in [
      ("currentRequest", recovered.currentRequest, original.currentRequest),
      ("originalRequest", recovered.originalRequest, original.originalRequest),
    ] {
      guard let left, let right else {
        if (left == nil) != (right == nil) { return name }
        continue
      }
      if let field = RequestDifferential.typedDifference(left, right) { return "\(name).\(field)" }
    }
    let fields: [(String, (ResumeData) -> AnyHashable?)] = [
      ("downloadURL", { $0.downloadURL }), ("bytesReceived", { $0.bytesReceived }),
      ("entityTag", { $0.entityTag }), ("serverDownloadDate", { $0.serverDownloadDate }),
      ("tempFileName", { $0.tempFileName }), ("localPath", { $0.localPath }),
      ("byteRange", { $0.byteRange }), ("infoVersion", { $0.infoVersion }),
      ("unknownKeys", { Set($0.unknownKeys) }), ("nested", { $0.nested }),
      ("findings", { Set($0.findings()) }),
    ]
    if let field = fields.first(where: { $0.1(recovered) != $0.1(original) })?.0 { return field }
    if recovered.container == original.container,
      recovered.entries.keys != original.entries.keys,
      [.xmlPlist, .binaryPlist].contains(original.container)
    {
      return "key order"
    }
    return nil
  }
}

import PortableFoundation
import PropertyList

/// An archived NSHTTPURLResponse / NSURLResponse, as modern CFNetwork stores it under
/// `NSURLSessionResumeResponse` (a secure-coding archive, `$top` key `root`).
///
/// CFNetwork's field layout for responses is not publicly documented, so only what can be found
/// without guessing is typed: the URL (the first field that refers to an NSURL), and the status
/// code and header fields when a field is named for them. Everything is kept as read, so the
/// archive re-encodes to the same bytes.
public struct URLResponseArchive: Sendable, Hashable {
  /// The archive; its root is the response object.
  public let archive: KeyedArchive
  private let root: ArchivedObject

  /// Reads a response archive.
  ///
  /// - Throws: ``KeyedArchiveError`` with a key path if the archive is malformed or its root is not
  ///   an NSURLResponse.
  public init(decoding data: Data, limits: KeyedArchiveLimits = .default) throws {
    try self.init(archive: KeyedArchive(decoding: data, limits: limits), limits: limits)
  }

  /// Views an archive as a response.
  ///
  /// - Throws: ``KeyedArchiveError`` if the root is not an NSURLResponse.
  public init(archive: KeyedArchive, limits: KeyedArchiveLimits = .default) throws {
    guard case .object(let object) = try archive.decodeRoot(limits: limits),
      object.classChain.contains("NSURLResponse")
    else {
      throw KeyedArchiveError(.badObject, "is not an NSURLResponse", at: "$top.\(archive.rootKey)")
    }
    self.archive = archive
    root = object
  }

  /// The class chain of the response object (`NSHTTPURLResponse`, `NSURLResponse`, `NSObject`).
  public var classChain: [String] { root.classChain }

  /// The fields of the response object, decoded, in archived order.
  public var fields: [ArchivedField] { root.fields }

  /// The URL: the first field that refers to an NSURL.
  public var url: String? {
    for field in root.fields {
      if case .reference(.url(let url)) = field.value { return url.absoluteString }
    }
    return nil
  }

  /// The status code, when a field whose name contains "statuscode" (any case) holds an integer.
  public var statusCode: Int? {
    for field in root.fields where field.key.lowercased().contains("statuscode") {
      switch field.value {
      case .inline(.integer(let code)), .reference(.integer(let code)):
        return code.int64Value.map { Int($0) }
      default: continue
      }
    }
    return nil
  }

  /// The header fields, when a field whose name contains "header" (any case) holds a dictionary of
  /// strings.
  public var headerFields: [(name: String, value: String)]? {
    for field in root.fields where field.key.lowercased().contains("header") {
      guard case .reference(.dictionary(let entries, _)) = field.value else { continue }
      return entries.compactMap { entry in
        guard case .string(let name, _) = entry.key, case .string(let value, _) = entry.value else {
          return nil
        }
        return (name, value)
      }
    }
    return nil
  }
}

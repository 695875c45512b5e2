import KeyedArchive
import PortableFoundation
@_spi(InPlace) import PropertyList

// What the toolkit reads from a Network.framework blob's root object: its requests and response as
// archives of their own (the form CFNetwork's blobs keep them in, and what conversion writes), its
// partial file's name and URL. A blob read in place gets these from the archive's bytes, without
// decoding the archive; the decoded root object (`networkFrameworkInfo`) is then made on first use.
//
// Its tree twin: `init(info:)`, the same parts from the decoded root object. Held equal by
// `ResumeDifferential.writerDifference` in Tests/ResumeDataTests/SubArchiveTests.swift and
// Tests/ResumeDataTests/NetworkFrameworkInPlaceTests.swift, and by the fuzz harness
// Fuzz/Sources/FuzzResumeData/main.swift.

/// An object field of a Network.framework root archived on its own.
enum NetworkFrameworkSubArchive: Sendable {
  /// The field is absent, nil, or not a reference.
  case absent
  /// `KeyedArchive(root: value).encoded()` of the object the field names.
  case archived(Data)
  /// Archiving the object threw: what conversion reports. (Boxed: the error is large, and the
  /// parts that hold three of these are copied whole as a blob is read.)
  indirect case unencodable(ResumeDataError)

  var bytes: Data? {
    if case .archived(let bytes) = self { return bytes }
    return nil
  }
}

/// The fields of a Network.framework root object the toolkit reads.
struct NetworkFrameworkParts: Sendable {
  var currentRequest: NetworkFrameworkSubArchive
  var originalRequest: NetworkFrameworkSubArchive
  var response: NetworkFrameworkSubArchive
  /// `tempFileName`, when it names a string.
  var tempFileName: String?
  /// `fileURL`'s absolute string, when it names a URL.
  var fileURL: String?
  /// The objects archived from the bytes of an archive read in place (known to decode, then).
  var writtenUIDs: [UInt64] = []
  /// For a root read in place, the current and original requests as `URLRequestArchive(decoding:)`
  /// reads them in place from their archives (nil for each not read so, or absent: that
  /// initializer then reads it).
  var writtenRequests: (current: URLRequestArchive?, original: URLRequestArchive?) = (nil, nil)
  /// The values of the response's header fields named `validatorNames`, as decoding the response
  /// archive gives them (nil for each it does not hold, or when there is no response), read with
  /// the parts in place; nil when they are found by decoding it.
  var responseValidators: [String?]?

  /// The `$top` key of the request archives made of the blob's requests: the literal CFNetwork
  /// reads them under, as its own blobs hold them.
  static let requestRootKey = ResumeData.rootKey(of: .requestArchive)
  /// The `$top` key of the response archive made of the blob's response: `root`, as CFNetwork's
  /// `NSURLSessionResumeResponse` holds it.
  static let responseRootKey = ResumeData.rootKey(of: .responseArchive)

  /// The header fields that hold a Network.framework blob's validators, which it keeps only in its
  /// response: `ETag` and `Last-Modified`.
  static let validatorNames = ["ETag", "Last-Modified"]

  /// The fields of a decoded root object.
  init(info: ArchivedObject) {
    func archived(
      _ field: String, sameAs earlier: (ArchivedValue, NetworkFrameworkSubArchive)?,
      rootKey: ArchiveRootKey
    )
      -> (ArchivedValue, NetworkFrameworkSubArchive)?
    {
      guard case .reference(let value)? = info[field], value != .null else { return nil }
      // The original request is often the current one again (no redirect): archived once.
      if let earlier, earlier.0 == value { return earlier }
      do {
        let bytes = try ResumeDataError.wrapping(at: field) {
          try KeyedArchive(root: value, rootKey: rootKey.rawValue).encoded()
        }
        return (value, .archived(bytes))
      } catch let error as ResumeDataError {
        return (value, .unencodable(error))
      } catch {
        return (value, .unencodable(ResumeDataError(.keyedArchive, "\(error)", at: field)))
      }
    }
    let current = archived("currentRequest", sameAs: nil, rootKey: Self.requestRootKey)
    currentRequest = current?.1 ?? .absent
    originalRequest =
      archived("originalRequest", sameAs: current, rootKey: Self.requestRootKey)?.1 ?? .absent
    response = archived("response", sameAs: nil, rootKey: Self.responseRootKey)?.1 ?? .absent
    if case .reference(.string(let name, _))? = info["tempFileName"] { tempFileName = name }
    if case .reference(.url(let url))? = info["fileURL"] { fileURL = url.absoluteString }
  }

  /// The fields of the root object of an archive read in place, each what `init(info:)` gives for
  /// the decoded root; nil when one of them is not written from the bytes, or when the rest of the
  /// root would not decode (`KeyedArchiveView.decodesFromBytes`): the caller then decodes the
  /// archive.
  init?(view: KeyedArchiveView) {
    let table = view.table
    let root = view.object(view.rootUID)
    // The UID a reference field names, or nil for one that is absent, nil or held inline. Nil is
    // UID 0 alone, as decoding reads it: another object that is the string "$null" decodes to
    // that string, which `init(info:)` archives like any other value.
    func reference(_ field: StaticString) -> UInt64? {
      guard let value = table.value(root, forKey: field), table.isKind(value, .uid) else {
        return nil
      }
      let uid = table.uid(value)
      return uid == 0 ? nil : uid
    }
    // One writer for every object, and for the check of the root.
    var writer = SubArchiveWriter(view: view)
    func archivedResponse(_ uid: UInt64?) -> NetworkFrameworkSubArchive? {
      guard let uid else { return .absent }
      return writer.archivedAsRoot(uid, rootKey: Self.responseRootKey).map { .archived($0) }
    }
    // A request, and what `URLRequestArchive(decoding:)` reads in place from its bytes, read from
    // the view the writer makes of them rather than checking them again (nil: not read so).
    func archivedRequest(_ uid: UInt64?) -> (NetworkFrameworkSubArchive, URLRequestArchive?)? {
      guard let uid else { return (.absent, nil) }
      let limits = KeyedArchiveLimits.default
      guard let written = writer.archivedAsRootWithView(uid, limits: limits.propertyList) else {
        return nil
      }
      let request = written.view.flatMap {
        URLRequestArchive(readingWritten: written.bytes, plist: $0, limits: limits)
      }
      return (.archived(written.bytes), request)
    }
    // The original request is most often the current one archived again as an object of its
    // own (a download never redirected): when the two unfold alike, the current one's archive and
    // request serve for both (`KeyedArchiveView.unfoldsAlike`).
    func alike(_ current: UInt64?, _ original: UInt64?, _ written: NetworkFrameworkSubArchive)
      -> Bool
    {
      guard let current, let original, let bytes = written.bytes,
        view.unfoldsAlike(current, original)
      else { return false }
      if KeyedArchiveView.checksAlikeWrites {
        let separate = writer.archivedAsRoot(original)
        guard separate == bytes else {
          fatalError(
            "objects \(current) and \(original) unfold alike but are archived apart as "
              + "\(bytes.count) and \(separate?.count ?? -1) bytes that differ")
        }
      }
      return true
    }
    let currentUID = reference("currentRequest")
    let originalUID = reference("originalRequest")
    let responseUID = reference("response")
    guard let current = archivedRequest(currentUID),
      let original = originalUID == currentUID || alike(currentUID, originalUID, current.0)
        ? current : archivedRequest(originalUID),
      let response = archivedResponse(responseUID)
    else { return nil }
    let written = [currentUID, originalUID, responseUID].compactMap { $0 }
    guard writer.decodesFromBytes(view.rootUID, written: written) else { return nil }
    (currentRequest, originalRequest, self.response) = (current.0, original.0, response)
    writtenRequests = (current.1, original.1)
    writtenUIDs = written
    responseValidators =
      if let responseUID {
        view.responseHeaderValues(ofWritten: responseUID, Self.validatorNames)
      } else {
        [String?](repeating: nil, count: Self.validatorNames.count)
      }
    if let uid = reference("tempFileName") {
      let object = view.object(uid)
      if table.isKind(object, .string) {
        tempFileName = table.string(object)
      } else if let classUID = view.classUID(ofInstance: object) {
        // An NSString instance decodes to its string; an NSMutableString is never written from
        // the bytes, and the check of the root has turned it down.
        if view.mostDerivedClassIs(classUID, "NSString") {
          tempFileName = view.referencedOrInlineString(object, "NS.string")
        }
      }
    }
    if let uid = reference("fileURL"), let classUID = view.classUID(ofInstance: view.object(uid)),
      view.mostDerivedClassIs(classUID, "NSURL")
    {
      let url = view.object(uid)
      // A URL relative to a base is resolved by Foundation's rules: left to the decoded value.
      if let base = table.value(url, forKey: "NS.base"), table.isKind(base, .uid),
        !view.isNull(table.uid(base))
      {
        return nil
      }
      fileURL = view.referencedOrInlineString(url, "NS.relative")
    }
  }

  /// The archive of the current (0) or original (1) request.
  func request(_ index: Int) -> NetworkFrameworkSubArchive {
    index == 0 ? currentRequest : originalRequest
  }
}

/// A Network.framework blob's parts, and its root object decoded from the archive on first use.
/// Both are made from the archive, so they take no part in the blob's equality (see `Unequated`).
final class NetworkFrameworkRoot: Sendable {
  let parts: NetworkFrameworkParts
  private let archive: LazyKeyedArchive
  private let limits: KeyedArchiveLimits
  private let decoded: Locked<ArchivedObject?>

  /// Parts of the root object already decoded.
  init(info: ArchivedObject, archive: LazyKeyedArchive, limits: KeyedArchiveLimits) {
    parts = NetworkFrameworkParts(info: info)
    self.archive = archive
    self.limits = limits
    decoded = Locked(info)
  }

  /// Parts read in place from an archive checked to decode, with a root that decodes.
  init(parts: NetworkFrameworkParts, archive: LazyKeyedArchive, limits: KeyedArchiveLimits) {
    self.parts = parts
    self.archive = archive
    self.limits = limits
    decoded = Locked(nil)
  }

  /// The root object, decoded now if it was not yet.
  var info: ArchivedObject {
    decoded.withLock { decoded in
      if let decoded { return decoded }
      guard case .object(let object)? = try? archive.archive.decodeRoot(limits: limits) else {
        // The in-place check accepts only roots that decode to an object (the fuzz targets
        // compare the two paths on every input): reaching this is a bug in that check.
        fatalError("a Network.framework root the in-place check accepted does not decode")
      }
      decoded = object
      return object
    }
  }
}

import KeyedArchive
import PortableFoundation
@_spi(Writing) import PropertyList

extension ResumeData {
  /// Smaller than any blob that carries a request archive: the iOS 12.0–12.2 blobs made by
  /// cancelling before the first byte are about 160 bytes.
  static let tinyBlobSize = 400

  /// Diagnoses the blob: everything that makes it unresumable, or resumable only on some systems.
  ///
  /// Findings that only concern systems older than the oldest that writes a blob of this form
  /// (`oldestWriter`) are left out: `ios10-request-layout` on a v4 blob, which no iOS 10 ever
  /// meets, unless `target` is one of those systems.
  ///
  /// - Parameters:
  ///   - temporaryDirectory: where the partial file should be. When given, the partial file is
  ///     looked up there (its size only: nothing is read or written), and a `LocalPath` outside it
  ///     is reported. A name that could escape the directory is reported and never looked up.
  ///   - target: the system the blob is meant for: the findings that concern only it are kept,
  ///     and a form it cannot read is reported (`target-cannot-read`).
  /// - Returns: the findings, most severe first, in a stable order.
  public func findings(temporaryDirectory: URL? = nil, for target: RepairTarget? = nil)
    -> [Finding]
  {
    var found = [Finding]()
    found.reserveCapacity(4)
    if let target, let unreadable = unreadableFormFinding(for: target) {
      found.append(unreadable)
    }
    if let misplaced = archiveRootKeyFinding() { found.append(misplaced) }
    if isTiny || bytesReceived == 0 {
      found.append(
        Finding(
          "empty-blob", .error,
          "the blob records no received bytes (the iOS 12.0–12.2 cancel-before-first-byte case): start the download over",
          path: bytesReceived == 0 ? ResumeDataKey.bytesReceived : ""))
    }
    if byteRange != nil {
      found.append(
        Finding(
          "byte-range-present", .warning,
          "NSURLSessionResumeByteRange is set: iOS 11.0–11.2 then completes with a short or empty file (repair for it removes the key)",
          path: ResumeDataKey.byteRange))
    }
    // Each read once: a request is a value of several references, retained at every copy.
    let current = currentRequest
    let original = originalRequest
    if current == nil, entries[ResumeDataKey.currentRequest] != nil || isNetworkFramework {
      found.append(
        Finding(
          "request-undecodable", .error, "the current request archive does not decode",
          path: ResumeDataKey.currentRequest))
    }
    if original == nil, generation != .safari, generation != .networkFrameworkWebKit {
      found.append(
        Finding(
          "original-request-missing", .warning,
          "there is no original request: iOS 10.3–12.1 then gives the task a nil originalRequest (repair for them copies the current request)",
          path: ResumeDataKey.originalRequest))
    }
    func iOS10Unreadable(_ request: URLRequestArchive?) -> Bool {
      // `rootKey` is the literal (and `root` absent), found without making the string.
      request?.layout == .standard && request?.rootKeys == .rootObjectKey
    }
    let firstIOS10Unreadable =
      iOS10Unreadable(current)
      ? ResumeDataKey.currentRequest
      : iOS10Unreadable(original) ? ResumeDataKey.originalRequest : nil
    // A Network.framework blob holds its requests as objects, not as archives that could be read
    // back.
    if let first = firstIOS10Unreadable, generation != .networkFramework,
      generation != .networkFrameworkWebKit
    {
      found.append(Self.ios10RequestLayout(path: first))
    }
    // The `$N` layout is what a repair for iOS 10.0–10.1 writes (and what iOS 9 and earlier
    // wrote): no later system decodes it, so a blob repaired for that target and then sent
    // elsewhere loses its request there.
    if let first =
      current?.layout == .dollarNumbered
      ? ResumeDataKey.currentRequest
      : original?.layout == .dollarNumbered ? ResumeDataKey.originalRequest : nil
    {
      found.append(
        Finding("ios10-only-request-layout", .warning, Self.dollarLayoutMessage, path: first))
    }
    if generation != .networkFramework, generation != .networkFrameworkWebKit,
      let misplaced = requestRootKeyFinding(current: current, original: original)
    {
      found.append(misplaced)
    }
    if let misplaced = responseRootKeyFinding() { found.append(misplaced) }
    if let url = downloadURL ?? current?.url {
      if !Self.isHTTPURL(url) {
        found.append(
          Finding(
            "not-http", .error, "the URL is not http or https: only those resume",
            path: ResumeDataKey.downloadURL))
      }
    }
    // Only GET downloads resume; the request summary's rule, so that the one pass and diagnosis
    // cannot disagree.
    if let method = current?.httpMethod, !URLRequestArchive.isGETMethod(method) {
      found.append(
        Finding(
          "not-get", .error, "the request's method is \(method): only GET downloads resume",
          path: ResumeDataKey.currentRequest))
    }
    // One finding, for the first field that cannot be sent (current request first).
    if let problem = Self.unsendableHeaderProblem(current) {
      found.append(
        Self.unsendableHeader(problem, in: "current", path: ResumeDataKey.currentRequest))
    } else if let original,
      current.map({ !original.isSameDecoding(as: $0) }) ?? true,
      let problem = Self.unsendableHeaderProblem(original)
    {
      found.append(
        Self.unsendableHeader(problem, in: "original", path: ResumeDataKey.originalRequest))
    }
    if entityTag == nil, serverDownloadDate == nil {
      found.append(
        Finding(
          "no-validator", .error,
          "neither an ETag nor a Last-Modified date was recorded: the server cannot confirm the file is unchanged",
          path: isNetworkFramework || nested != nil ? "response" : ResumeDataKey.entityTag)
      )
    } else if let tag = entityTag, tag.hasPrefix("W/") {
      found.append(
        Finding(
          "weak-etag", .warning,
          "the ETag is weak (\(tag)): a byte range is not guaranteed to match",
          path: ResumeDataKey.entityTag))
    }
    let segments = segmentFindings(into: &found)
    partialFileFindings(temporaryDirectory, segments: segments, into: &found)
    if hasUnknownKeys {
      found.append(
        Finding(
          "unknown-keys", .info,
          "keys this toolkit gives no meaning to, kept as they are: "
            + unknownKeys.joined(separator: ", ")))
    }
    found.removeAll { !isRelevant($0, for: target) }
    // Most severe first, in the order found within a severity (a stable sort).
    guard found.count > 1 else { return found }
    return found.enumerated().sorted {
      ($0.element.severity, -$0.offset) > ($1.element.severity, -$1.offset)
    }.map(\.element)
  }

  /// The finding for request archives in the standard layout under `NSKeyedArchiveRootObjectKey`
  /// (the first such at `path`).
  static func ios10RequestLayout(path: String) -> Finding {
    Finding(
      "ios10-request-layout", .info,
      "the request archives are in the layout every OS writes, which iOS 10.0–10.1 cannot read back (repair for that target)",
      path: path)
  }

  /// What is wrong with the first header field of `request` that cannot be sent as it is (a name
  /// that is not an HTTP token, a value holding a line break or NUL), or nil.
  static func unsendableHeaderProblem(_ request: URLRequestArchive?) -> String? {
    guard let request, !request.headerFieldsAreSendable else { return nil }
    for field in request.headerFields
    where !URLRequestFields.Header.isSendable(name: field.name, value: field.value) {
      return URLRequestFields.Header(field.name, field.value).problem
    }
    return nil
  }

  private static func unsendableHeader(_ problem: String, in which: String, path: String)
    -> Finding
  {
    Finding(
      "unsendable-header", .error,
      "a header field of the \(which) request cannot be sent as it is: \(problem) "
        + "(`resumedata edit --remove-header NAME` takes it out)",
      path: path)
  }

  /// The size of a regular file, or nil when there is none (only its attributes are read).
  static func fileSize(_ file: URL) -> Int64? {
    guard let attributes = try? FileManager.default.attributesOfItem(atPath: file.path),
      attributes[.type] as? FileAttributeType == .typeRegular
    else { return nil }
    // FoundationEssentials gives the size as a UInt; Darwin's Foundation as an NSNumber, which
    // `as? UInt` bridges.
    return (attributes[.size] as? UInt).flatMap { Int64(exactly: $0) }
  }

  /// A `file://` URL's path, or the path itself.
  static func plainPath(_ path: String) -> String {
    path.hasPrefix("file://") ? URL(string: path)?.path ?? path : path
  }

  /// An absolute path without `..` components or NUL.
  static func isSafeAbsolutePath(_ path: String) -> Bool {
    !path.contains("\u{0}") && path.hasPrefix("/") && !path.split(separator: "/").contains("..")
  }

  /// The partial file inside `directory`: the temp file name there, or `LocalPath` when it lies
  /// inside; nil when the name is unsafe, the path is outside, or the blob names no file.
  func partialFile(in directory: URL) -> URL? {
    if let name = tempFileName {
      return Self.isSafeBareName(name) ? directory.appendingPathComponent(name) : nil
    }
    guard let path = localPath.map(Self.plainPath), Self.isSafeAbsolutePath(path) else {
      return nil
    }
    let base = directory.standardizedFileURL.path
    let resolved = URL(fileURLWithPath: path).standardizedFileURL
    return resolved.path.hasPrefix(base.hasSuffix("/") ? base : base + "/") ? resolved : nil
  }

  /// A bare file name with no way out of its directory: no separators, no `..`, no NUL, not empty.
  public static func isSafeBareName(_ name: String) -> Bool {
    // By byte, in place: Foundation's substring search is far slower, and these are single ASCII
    // bytes.
    return name.withUTF8InPlace { isSafeBareName(bytes: UnsafeRawBufferPointer($0)) }
  }

  /// `isSafeBareName(_:)` of a name's UTF-8 bytes.
  static func isSafeBareName(bytes: UnsafeRawBufferPointer) -> Bool {
    guard !bytes.isEmpty, !(bytes.count <= 2 && bytes.allSatisfy { $0 == UInt8(ascii: ".") })
    else { return false }
    for byte in bytes where byte == UInt8(ascii: "/") || byte == UInt8(ascii: "\\") || byte == 0 {
      return false
    }
    return true
  }

  /// Whether a URL string's scheme is http or https, in any case.
  static func isHTTPURL(_ url: String) -> Bool { isHTTPURL(bytes: url.utf8) }

  /// `isHTTPURL(_:)` of a URL's UTF-8 bytes.
  static func isHTTPURL(bytes: some Sequence<UInt8>) -> Bool {
    // Byte by byte, building no string: a byte ORed with 0x20 is one of "https" only when it is
    // that letter in either case.
    var position = 0
    for byte in bytes {
      if byte == UInt8(ascii: ":") { return position == 4 || position == 5 }
      guard position < 5, byte | 0x20 == httpsBytes[position] else { return false }
      position += 1
    }
    return false
  }

  private static let httpsBytes = Array("https".utf8)

  /// The findings of a segmented download's map (`ResumeDataKitSegments`), and the map when it
  /// reads.
  private func segmentFindings(into found: inout [Finding]) -> SegmentMap? {
    guard segments != nil else { return nil }
    let map: SegmentMap?
    do {
      map = try segmentMap()
    } catch {
      found.append(
        Finding(
          "segment-map-malformed", .error,
          "\(error.message): this toolkit's downloader refuses the blob (the partial file holds segments nobody can place)",
          path: ResumeDataKey.segments))
      return nil
    }
    guard let map, !map.isComplete else { return map }
    // The downloader allocates the partial file to the whole length once the server's first
    // answer allows segments: only the map says which bytes in it are real.
    found.append(
      Finding(
        "segmented-partial-file", .warning,
        "a download over several connections: the partial file is allocated to all \(map.total) bytes and holds \(map.bytesOnDisk) of them in \(map.onDisk.count) range\(map.onDisk.count == 1 ? "" : "s"); an Apple system resumes from byte \(map.contiguousPrefix) and appends at the file's end, so truncate the file to \(map.contiguousPrefix) bytes before handing it over (`repair --truncate-partial-file`), or resume it with this toolkit",
        path: ResumeDataKey.segments))
    return map
  }

  private func partialFileFindings(
    _ directory: URL?, segments map: SegmentMap?, into all: inout [Finding]
  ) {
    var found = [Finding]()
    defer { all += found }
    let tempFileName = tempFileName
    if let name = tempFileName, !Self.isSafeBareName(name) {
      found.append(
        Finding(
          "unsafe-file-name", .error,
          "the temp file name \(String(reflecting: name)) is not a bare name (separators, .., NUL or empty): it is never followed",
          path: ResumeDataKey.tempFileName))
    } else if tempFileName == nil, let path = localPath,
      !Self.isSafeAbsolutePath(Self.plainPath(path))
    {
      found.append(
        Finding(
          "unsafe-file-name", .error,
          "the local path \(String(reflecting: path)) is not a plain absolute path: it is never followed",
          path: ResumeDataKey.localPath))
    }
    guard found.isEmpty, let directory else { return }
    let partial = partialFile(in: directory)
    if partial == nil, tempFileName == nil, localPath != nil {
      found.append(
        Finding(
          "local-path-outside-directory", .warning,
          "the local path is outside \(directory.standardizedFileURL.path) (an old sandbox?): repair moves it there by its last component",
          path: ResumeDataKey.localPath))
    }
    guard let partial else { return }
    // Only the size is asked for; nothing is read, and the name was checked above.
    guard let size = Self.fileSize(partial) else {
      found.append(
        Finding(
          "partial-file-missing", .error,
          "the partial file \(partial.lastPathComponent) is not in "
            + directory.standardizedFileURL.path,
          path: tempFileName != nil ? ResumeDataKey.tempFileName : ResumeDataKey.localPath))
      return
    }
    if let map {
      // The file is allocated to the whole length; it only has to reach the last range on disk.
      let end = map.onDisk.last?.upperBound ?? 0
      if size < end {
        found.append(
          Finding(
            "partial-file-size-mismatch", .warning,
            "the partial file holds \(size) bytes but the segment map records bytes up to \(end): repair keeps the ranges that fit",
            path: ResumeDataKey.segments))
      }
    } else if let received = bytesReceived, received != size {
      found.append(
        Finding(
          "partial-file-size-mismatch", .warning,
          "the partial file holds \(size) bytes but the blob records \(received): repair sets BytesReceived to the file's size",
          path: ResumeDataKey.bytesReceived))
    }
  }
}

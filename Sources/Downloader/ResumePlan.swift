import Foundation
import KeyedArchive
import PropertyList
import ResumeData

/// What resuming from a blob means on this machine: the request to send, the partial file and the
/// validator, decided the way a modern Apple OS decides them (format reference §6).
public struct ResumePlan: Sendable, Hashable {
  /// The request to continue: the blob's current request, else its original one, else a GET of
  /// its DownloadURL (cache policy 1, timeout 120, as CFNetwork makes it).
  public var request: URLRequestFields
  /// The original request (the current one when the blob has none).
  public var originalRequest: URLRequestFields
  /// The partial file.
  public var partialFile: URL
  /// The partial file's bare name, as resume data records it.
  public var tempFileName: String
  /// The byte count the blob records (the partial file's size decides; see `Download`).
  public var recordedBytes: Int64?
  /// The strong or weak ETag the blob records.
  public var entityTag: String?
  /// The Last-Modified date the blob records.
  public var lastModified: String?
  /// The segments on disk, for a blob of a segmented download (`ResumeDataKitSegments`).
  public var segments: SegmentMap?

  /// Plans a resume.
  ///
  /// - Parameters:
  ///   - resumeData: the blob, of any generation.
  ///   - temporaryDirectory: where a `TempFileName` lives.
  ///   - allowedDirectories: where a `LocalPath` may point (it is refused anywhere else).
  /// - Throws: `DownloadError`: `.invalidResumeData` when the blob names nothing to fetch or
  ///   its segment map is malformed,
  ///   `.unsafePartialFile` when its partial file could be outside the directories,
  ///   `.unsupportedURL` for anything but http and https.
  public init(resumeData: ResumeData, temporaryDirectory: URL, allowedDirectories: [URL] = [])
    throws(DownloadError)
  {
    let current = resumeData.currentRequest.map(Self.fields)
    let original = resumeData.originalRequest.map(Self.fields)
    if let request = current ?? original {
      self.request = request
    } else if let url = resumeData.downloadURL {
      request = URLRequestFields(url: url, timeoutInterval: 120, cachePolicy: 1)
    } else {
      throw DownloadError(.invalidResumeData, "the blob holds no request and no download URL")
    }
    originalRequest = original ?? request
    guard Self.isHTTP(request.url) else {
      throw DownloadError(.unsupportedURL, "\(request.url) is not an http or https URL")
    }
    recordedBytes = resumeData.bytesReceived
    entityTag = resumeData.entityTag
    lastModified = resumeData.serverDownloadDate
    // A map that does not read is refused: the file then holds segments nobody can place.
    do {
      segments = try resumeData.segmentMap()
    } catch {
      throw DownloadError(.invalidResumeData, error.description)
    }
    let directory = temporaryDirectory.standardizedFileURL
    if let name = resumeData.tempFileName {
      guard ResumeData.isSafeBareName(name) else {
        throw DownloadError(
          .unsafePartialFile, "the temp file name \(String(reflecting: name)) is not a bare name")
      }
      // A link there could lead anywhere: the partial file must be in the directory, as a
      // LocalPath must be in its allowed ones, once links are followed.
      let file = directory.appendingPathComponent(name)
      guard Self.staysInside(file, directory) else {
        throw DownloadError(
          .unsafePartialFile,
          "the partial file \(file.path) is a link out of \(directory.path)")
      }
      tempFileName = name
      partialFile = file
    } else if let path = resumeData.localPath {
      let plain = path.hasPrefix("file://") ? URL(string: path)?.path ?? path : path
      let file = URL(fileURLWithPath: plain).standardizedFileURL.resolvingSymlinksInPath()
      let allowed = ([directory] + allowedDirectories).map {
        $0.standardizedFileURL.resolvingSymlinksInPath().path
      }
      guard plain.hasPrefix("/"), !plain.contains("\u{0}"),
        allowed.contains(where: { file.path.hasPrefix($0.hasSuffix("/") ? $0 : $0 + "/") })
      else {
        throw DownloadError(
          .unsafePartialFile,
          "the local path \(String(reflecting: path)) is outside the allowed directories")
      }
      tempFileName = file.lastPathComponent
      partialFile = file
    } else {
      throw DownloadError(.invalidResumeData, "the blob names no partial file")
    }
  }

  /// A request archive's typed values as fields to send (and to archive again).
  static func fields(_ request: URLRequestArchive) -> URLRequestFields {
    URLRequestFields(
      url: request.url ?? "", httpMethod: request.httpMethod ?? "GET",
      headerFields: request.headerFields.map { URLRequestFields.Header($0.name, $0.value) },
      body: request.body, timeoutInterval: request.timeoutInterval ?? 60,
      cachePolicy: request.cachePolicy ?? 0, mainDocumentURL: request.mainDocumentURL,
      httpShouldHandleCookies: request.httpShouldHandleCookies ?? true,
      allowsCellularAccess: request.allowsCellularAccess ?? true,
      networkServiceType: request.networkServiceType ?? 0, priority: request.priority ?? -1)
  }

  /// Whether `file`, named in `directory`, is no symbolic link, or one to a file in that
  /// directory (or below it) once every link is followed. A link to nothing is not: what it names
  /// would be made wherever it points.
  private static func staysInside(_ file: URL, _ directory: URL) -> Bool {
    var status = stat()
    guard lstat(file.path, &status) == 0, status.st_mode & S_IFMT == S_IFLNK else { return true }
    func real(_ path: String) -> String? {
      guard let resolved = realpath(path, nil) else { return nil }
      defer { free(resolved) }
      return String(cString: resolved)
    }
    guard let target = real(file.path), let inside = real(directory.path) else { return false }
    return target.hasPrefix(inside.hasSuffix("/") ? inside : inside + "/")
  }

  static func isHTTP(_ url: String) -> Bool {
    guard let scheme = URL(string: url)?.scheme?.lowercased() else { return false }
    return scheme == "http" || scheme == "https"
  }
}

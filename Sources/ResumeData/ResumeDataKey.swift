import KeyedArchive

/// The keys of the resume dictionary (format reference §2).
public enum ResumeDataKey {
  /// Absolute URL of the current request (string).
  public static let downloadURL = "NSURLSessionDownloadURL"
  /// Bytes on disk (integer).
  public static let bytesReceived = "NSURLSessionResumeBytesReceived"
  /// Archived current request (data).
  public static let currentRequest = "NSURLSessionResumeCurrentRequest"
  /// Archived original request (data).
  public static let originalRequest = "NSURLSessionResumeOriginalRequest"
  /// The raw ETag header (string).
  public static let entityTag = "NSURLSessionResumeEntityTag"
  /// The raw Last-Modified header (string).
  public static let serverDownloadDate = "NSURLSessionResumeServerDownloadDate"
  /// The partial file's bare name in the temporary directory (string).
  public static let tempFileName = "NSURLSessionResumeInfoTempFileName"
  /// The partial file's absolute path (string).
  public static let localPath = "NSURLSessionResumeInfoLocalPath"
  /// The resume-info version: 1, 2, 4 or 5 (integer).
  public static let infoVersion = "NSURLSessionResumeInfoVersion"
  /// The Range header's text after `bytes=` (string).
  public static let byteRange = "NSURLSessionResumeByteRange"
  /// Archived NSHTTPURLResponse (data).
  public static let response = "NSURLSessionResumeResponse"
  /// This toolkit's own: which bytes of a segmented download's partial file are on disk (string,
  /// `bytes=S-E,…/TOTAL`; the downloader's ``SegmentMap``). Apple's systems ignore it; for them
  /// `NSURLSessionResumeBytesReceived` is the contiguous prefix from byte 0.
  public static let segments = "ResumeDataKitSegments"

  /// Every key this library gives a meaning to, including the rare modern ones kept verbatim.
  public static let known = Set(all)

  /// `known` in a fixed order, the keys CFNetwork writes first: the strings a blob's keys are
  /// read as (constants, so reading a key allocates nothing).
  static let all: [String] = [
    downloadURL, bytesReceived, currentRequest, originalRequest, entityTag, serverDownloadDate,
    tempFileName, infoVersion, localPath, byteRange, response, "NSURLSessionResumeExtractor",
    "PublishingURL", "ResumePlaceholderURLBookmarkData", segments,
  ]

  /// `all`, as the table a blob's keys are looked up in.
  static let allKnown = KnownKeys(all)

  /// Whether `key` is one of `known`, without hashing it.
  static func isKnown(_ key: String) -> Bool { allKnown.contains(key) }
}

/// The nine keys CFNetwork writes, numbered as in `ResumeDataKey.all` (its first nine): the keys
/// the one-pass readings of healthy blobs accept, and nothing else.
enum WrittenKey: Int, CaseIterable {
  case downloadURL, bytesReceived, currentRequest, originalRequest, entityTag
  case serverDownloadDate, tempFileName, infoVersion, localPath

  /// The key's string.
  var name: String { ResumeDataKey.all[rawValue] }
}

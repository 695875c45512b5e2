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

  /// Every key this library gives a meaning to, including the rare modern ones kept verbatim.
  public static let known: Set<String> = [
    downloadURL, bytesReceived, currentRequest, originalRequest, entityTag, serverDownloadDate,
    tempFileName,
    localPath, infoVersion, byteRange, response, "NSURLSessionResumeExtractor", "PublishingURL",
    "ResumePlaceholderURLBookmarkData",
  ]
}

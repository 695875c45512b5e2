import Foundation

/// Why a download failed, stopped or could not start.
public struct DownloadError: Error, Sendable, Hashable, CustomStringConvertible {
  /// A stable category.
  public struct Code: Sendable, Hashable, RawRepresentable, CustomStringConvertible {
    /// The code's stable name.
    public let rawValue: String
    /// Creates a code from its name.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The resume data does not decode, or names no request or URL to fetch.
    public static let invalidResumeData = Code(rawValue: "invalid-resume-data")
    /// The partial file's name could leave its directory, or its path lies outside the allowed ones.
    public static let unsafePartialFile = Code(rawValue: "unsafe-partial-file")
    /// Another download (in this process or another) is writing the same partial file.
    public static let partialFileInUse = Code(rawValue: "partial-file-in-use")
    /// A download manager already has a task for another URL to the same destination.
    public static let duplicateDestination = Code(rawValue: "duplicate-destination")
    /// The URL is not http or https.
    public static let unsupportedURL = Code(rawValue: "unsupported-url")
    /// A header field of the request could not be sent as it is: its name is not an HTTP token,
    /// or its value holds a line break or NUL.
    public static let invalidHeader = Code(rawValue: "invalid-header")
    /// The server answered with a status that is neither the file nor a restart (404, 500, …).
    public static let httpStatus = Code(rawValue: "http-status")
    /// The server's 206 does not continue the partial file (Content-Range start, total or encoding).
    public static let badPartialResponse = Code(rawValue: "bad-partial-response")
    /// The connection failed or was lost.
    public static let network = Code(rawValue: "network")
    /// No byte arrived for the stall timeout.
    public static let stalled = Code(rawValue: "stalled")
    /// The finished file's digest is not the expected one.
    public static let digestMismatch = Code(rawValue: "digest-mismatch")
    /// A file could not be read or written.
    public static let io = Code(rawValue: "io")
    /// The download was cancelled.
    public static let cancelled = Code(rawValue: "cancelled")
    /// The configured engine is not built in on this platform, or cannot do what the
    /// configuration asks of it (trust a certificate authority of one's own: URLSession on Linux).
    public static let unsupportedEngine = Code(rawValue: "unsupported-engine")
    /// The server's certificate is not trusted (by the system's authorities, or by the ones
    /// `DownloadConfiguration.certificateAuthority` names): not retried.
    public static let untrustedServer = Code(rawValue: "untrusted-server")
    /// The certificate authority file holds no PEM certificate.
    public static let invalidCertificate = Code(rawValue: "invalid-certificate")

    /// The code's name.
    public var description: String { rawValue }
  }

  /// The category.
  public var code: Code
  /// A sentence saying what happened.
  public var message: String
  /// The HTTP status, for `.httpStatus`.
  public var status: Int?

  /// Creates an error.
  public init(_ code: Code, _ message: String, status: Int? = nil) {
    self.code = code
    self.message = message
    self.status = status
  }

  /// Whether trying again (resuming) may succeed: network failures, stalls, 408, 429 and 5xx.
  public var isRetryable: Bool {
    switch code {
    case .network, .stalled: return true
    case .httpStatus:
      return status.map { $0 == 408 || $0 == 429 || (500...599).contains($0) } ?? false
    default: return false
    }
  }

  /// `code: message`.
  public var description: String { "\(code): \(message)" }
}

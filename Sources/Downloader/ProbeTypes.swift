import Foundation
import ResumeData

/// Why a probe could not be made.
public struct ProbeError: Error, Sendable, Hashable, CustomStringConvertible {
  /// A stable category.
  public enum Code: String, Sendable, Hashable {
    /// The URL is not http or https, or has no host.
    case unsupportedURL = "unsupported-url"
    /// A header field cannot be sent as it is, or the options are out of range.
    case invalidOption = "invalid-option"
    /// The connection failed (refused, unreachable, name not found, TLS, lost).
    case network
    /// No complete answer came before the probe's timeout.
    case timedOut = "timed-out"
    /// A redirect that is not followed (not to http or https, or too many).
    case redirect
  }

  /// The category.
  public var code: Code
  /// A sentence saying what happened.
  public var message: String

  /// Creates an error.
  public init(_ code: Code, _ message: String) {
    self.code = code
    self.message = message
  }

  /// `code: message`.
  public var description: String { "\(code.rawValue): \(message)" }
}

/// How a probe asks: the request's own fields, and its bounds.
public struct ProbeOptions: Sendable {
  /// Header fields sent with every request (an `Accept-Encoding` among them takes the place of
  /// URLSession's default in the requests that stand for Apple's loaders).
  public var headers: [(name: String, value: String)] = []
  /// The method the download would use. The probe sends GET whatever this says (it never sends
  /// a request that could change something); any other method is reported (`not-get`).
  public var method = "GET"
  /// How many times the plain request is made, each on a new connection, to see whether the
  /// validators and the length hold (1 to 50).
  public var requests = 5
  /// The time the whole probe may take.
  public var timeout: Duration = .seconds(30)
  /// The bytes a ranged request asks for (and the most read from any answer).
  public var rangeLength = 1024
  /// The redirects followed from the URL.
  public var maximumRedirects = 10
  /// Whether the two requests that stand for Apple's loaders (URLSession's default
  /// `Accept-Encoding`) are made.
  public var asksAsAppleLoaders = true
  /// The instant expiry times are compared with (tests fix it).
  public var now: @Sendable () -> Date = { Date() }

  /// The range `requests` may take.
  public static let requestRange = 1...50

  /// Options with the defaults.
  public init() {}

  /// The `Accept-Encoding` URLSession sends unless a request sets one.
  public static let urlSessionAcceptEncoding = "gzip, deflate, br"
}

/// A redirect followed on the way to the answer.
public struct ProbeRedirect: Sendable, Hashable {
  /// Its status (301, 302, 303, 307, 308).
  public var status: Int
  /// The URL that answered with it.
  public var from: String
  /// Its Location, resolved.
  public var to: String

  /// Creates a redirect.
  public init(status: Int, from: String, to: String) {
    self.status = status
    self.from = from
    self.to = to
  }
}

/// What one request of a probe stands for.
public enum ProbeRequestKind: String, Sendable, Hashable, CaseIterable {
  /// The plain GET (`Accept-Encoding: identity`), the first of the repeated ones.
  case plain
  /// The plain GET again, on a new connection.
  case repeated
  /// `Range` for the first bytes.
  case rangeStart = "range-start"
  /// `Range` for bytes in the middle, alone: what `curl -C -` and `wget -c` send.
  case rangeMiddle = "range-middle"
  /// The same with `If-Range` = the validator the server gave: what this toolkit sends.
  case ifRange = "if-range"
  /// The same with an `If-Range` the server never gave.
  case wrongIfRange = "wrong-if-range"
  /// The plain GET with URLSession's default `Accept-Encoding`: what Apple's loaders ask first.
  case defaultEncoding = "default-encoding"
  /// `Range` and `If-Range` = the validator of that answer, with the default `Accept-Encoding`:
  /// what Apple's loaders send when they resume.
  case defaultEncodingIfRange = "default-encoding-if-range"
}

/// One request of a probe and its answer.
public struct ProbeResponse: Sendable, Hashable {
  /// What the request stands for.
  public var kind: ProbeRequestKind
  /// The URL asked for.
  public var url: String
  /// The fields that make this request what it is: `Range`, `If-Range`, `Accept-Encoding`.
  public var sent: [HeaderField]
  /// The redirects followed.
  public var redirects: [ProbeRedirect]
  /// The URL that answered.
  public var finalURL: String
  /// The status.
  public var status: Int
  /// The response's header fields, sorted by name.
  public var headers: [HeaderField]
  /// The body bytes read (at most `ProbeOptions.rangeLength`).
  public var body: Data

  /// Creates an answer (the probe makes them; tests and fuzzers judge answers of their own).
  public init(
    kind: ProbeRequestKind, url: String, sent: [HeaderField], redirects: [ProbeRedirect] = [],
    finalURL: String, status: Int, headers: [HeaderField], body: Data = Data()
  ) {
    self.kind = kind
    self.url = url
    self.sent = sent
    self.redirects = redirects
    self.finalURL = finalURL
    self.status = status
    self.headers = headers
    self.body = body
  }

  /// A header field.
  public struct HeaderField: Sendable, Hashable {
    /// Its name.
    public var name: String
    /// Its value.
    public var value: String

    /// Creates a field.
    public init(_ name: String, _ value: String) {
      self.name = name
      self.value = value
    }
  }

  /// A response field, matched without regard to case.
  public func header(_ name: String) -> String? {
    headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
  }

  /// A field sent, matched without regard to case.
  public func sentHeader(_ name: String) -> String? {
    sent.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
  }

  /// The status and its reason phrase, as in `200 OK`.
  public var statusText: String {
    let reason = HTTPURLResponseReason.phrase(status)
    return reason.isEmpty ? "\(status)" : "\(status) \(reason)"
  }

  /// The ETag.
  public var entityTag: String? { header("ETag") }
  /// The Last-Modified date.
  public var lastModified: String? { header("Last-Modified") }
  /// The Content-Length, when it is a number.
  public var contentLength: Int64? { header("Content-Length").flatMap { HTTPRange.digits($0) } }
  /// The Content-Range, parsed.
  public var contentRange: HTTPRange.ContentRange? {
    header("Content-Range").flatMap(HTTPRange.parseContentRange)
  }
  /// The content coding, nil for none or `identity`.
  public var contentEncoding: String? {
    guard let coding = header("Content-Encoding")?.trimmingCharacters(in: .whitespaces),
      !coding.isEmpty, coding.lowercased() != "identity"
    else { return nil }
    return coding
  }
  /// The complete length the answer tells: a 206's Content-Range total, else a 200's
  /// Content-Length (unencoded).
  public var completeLength: Int64? {
    if status == 206 { return contentRange?.total }
    if status == 200, contentEncoding == nil { return contentLength }
    return nil
  }
}

/// Who would resume the download.
public enum ProbeConsumer: String, Sendable, Hashable, CaseIterable {
  /// URLSession's classic loader (CFNetwork), with its default `Accept-Encoding`.
  case apple
  /// URLSession's Network.framework loader (`usesClassicLoadingMode = false`, iOS 18, macOS 15).
  case networkFramework = "network-framework"
  /// This toolkit's downloader (`resumedata download`).
  case resumedata
  /// `curl -C - -L`.
  case curl
  /// `wget -c`.
  case wget

  /// The consumer's name as the text report shows it.
  public var title: String {
    switch self {
    case .apple: "Apple URLSession (classic loader)"
    case .networkFramework: "Apple URLSession (Network.framework loader)"
    case .resumedata: "resumedata download"
    case .curl: "curl -C -"
    case .wget: "wget -c"
    }
  }
}

/// What a consumer does when a download of the URL is interrupted and resumed.
public enum ProbeOutcome: String, Sendable, Hashable, CaseIterable {
  /// It continues from the bytes it has.
  case resumes
  /// It continues until the signed URL it resumes from expires; after that the resume fails.
  case resumesUntilExpiry = "resumes-until-expiry"
  /// It throws the bytes away and fetches the whole file again.
  case restartsFromZero = "restarts-from-zero"
  /// It makes no resume data (`cancel(byProducingResumeData:)` hands back nil).
  case noResumeData = "no-resume-data"
  /// It takes the file for complete while it is short.
  case completesShort = "completes-short"
  /// The resume (or the download) fails with an error.
  case fails

  /// The outcome in words.
  public var phrase: String {
    switch self {
    case .resumes: "resumes"
    case .resumesUntilExpiry: "resumes until the signed URL expires"
    case .restartsFromZero: "restarts from zero"
    case .noResumeData: "makes no resume data"
    case .completesShort: "completes with a short file"
    case .fails: "fails"
    }
  }
}

/// A consumer's verdict: what it does on resume, and why.
public struct ProbeVerdict: Sendable, Hashable {
  /// Who.
  public var consumer: ProbeConsumer
  /// What it does.
  public var outcome: ProbeOutcome
  /// The codes of the findings that decide it (empty when it resumes untroubled).
  public var reasons: [String]
  /// One line saying what happens and why.
  public var summary: String
  /// Whether a changed file (or another server's copy) would be spliced onto the partial file:
  /// the consumer sends no `If-Range`, or the server ignores it.
  public var splicesChangedFile: Bool
  /// When the signed URL it resumes from expires, for `resumesUntilExpiry`.
  public var expires: Date?
  /// What of this verdict is inferred rather than observed or documented; nil when nothing is.
  public var inferred: String?

  /// Whether the consumer resumes (untroubled by expiry).
  public var resumes: Bool { outcome == .resumes }
}

/// What a probe found: every request and answer, the findings, and a verdict per consumer.
public struct ProbeReport: Sendable, Hashable {
  /// The URL probed.
  public var url: String
  /// The URL the first request ended at, after its redirects.
  public var finalURL: String
  /// Every request made and its answer, in order.
  public var responses: [ProbeResponse]
  /// The findings, most severe first (codes in docs/findings.md).
  public var findings: [Finding]
  /// One verdict per consumer, in `ProbeConsumer.allCases` order.
  public var verdicts: [ProbeVerdict]

  /// The first answer (the plain GET).
  public var first: ProbeResponse? { responses.first }

  /// Whether every consumer resumes.
  public var resumesEverywhere: Bool { verdicts.allSatisfy(\.resumes) }

  /// The verdict for one consumer.
  public func verdict(_ consumer: ProbeConsumer) -> ProbeVerdict? {
    verdicts.first { $0.consumer == consumer }
  }

  /// The bytes of body read over all requests.
  public var bytesRead: Int { responses.reduce(0) { $0 + $1.body.count } }
}

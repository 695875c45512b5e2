import Foundation
import KeyedArchive

#if canImport(CCurlShim)
  import CCurlShim
#endif

/// Which HTTP engine moves a download's bytes. Everything above it (ranges and validators, the
/// checks of every response, restarts, resume data, segments, retries, stalls, redirects, events)
/// is the same code whichever it is.
public enum DownloadEngine: String, Sendable, Hashable, CaseIterable {
  /// Foundation's URLSession: the system's own on Apple platforms; on Linux FoundationNetworking,
  /// whose event loop keeps a core busy while it waits for a rate-limited server
  /// (docs/downloader.md).
  case urlSession = "urlsession"
  /// libcurl's multi interface driven by one thread that sleeps in `curl_multi_poll` until there
  /// is data or a deadline. Linux only.
  case curl

  /// The engine a download uses when none is chosen: libcurl where it is built in (Linux, where it
  /// costs what curl costs), URLSession elsewhere. The one place this choice is made.
  public static var platformDefault: DownloadEngine {
    isAvailable(.curl) ? .curl : .urlSession
  }

  /// Whether this build has the engine.
  public static func isAvailable(_ engine: DownloadEngine) -> Bool {
    switch engine {
    case .urlSession:
      return true
    case .curl:
      #if canImport(CCurlShim) && os(Linux)
        return true
      #else
        return false
      #endif
    }
  }

  /// Whether a certificate authority of one's own (`DownloadConfiguration.certificateAuthority`)
  /// can be trusted through this engine on this platform. libcurl takes one as `CURLOPT_CAINFO`;
  /// Apple's URLSession hands the server's trust to its delegate, which evaluates it against the
  /// certificate; FoundationNetworking on Linux offers neither (libcurl verifies against the
  /// system bundle, no server-trust challenge reaches the delegate, and it reads no variable
  /// naming a bundle outside Android).
  public static func trustsOwnAuthority(_ engine: DownloadEngine) -> Bool {
    switch engine {
    case .curl:
      return isAvailable(.curl)
    case .urlSession:
      #if canImport(Security)
        return true
      #else
        return false
      #endif
    }
  }

  /// A transport of this engine for one run of exchanges; nil when the build lacks the engine.
  func makeTransport(_ settings: TransportSettings) -> (any HTTPTransport)? {
    switch self {
    case .urlSession:
      return URLSessionTransport(settings)
    case .curl:
      #if canImport(CCurlShim) && os(Linux)
        return CurlTransport(settings)
      #else
        return nil
      #endif
    }
  }
}

/// How a transport is set up for one run of exchanges.
struct TransportSettings: Sendable {
  /// Connections to one host at once.
  var connections = 1
  /// Chunks URLSession may hold for a delegate behind it (`maximumQueuedChunks`).
  var maximumQueuedChunks = 128
  /// A PEM file of certificate authorities to trust in place of the system's.
  var certificateAuthority: URL?
  /// Connecting, and then every wait for bytes, may take this long.
  var timeout: TimeInterval = 60
}

/// A request as a transport sends it: always GET.
struct TransportRequest: Sendable {
  var url: URL
  /// Sent in this order; each name at most once.
  var headers: [(name: String, value: String)]

  /// The value of a field, matched without regard to case.
  func header(_ name: String) -> String? {
    headers.first { HTTPFieldName.equal($0.name, name) }?.value
  }

  /// Sets (or with nil removes) a field, wherever it was.
  mutating func setHeader(_ name: String, _ value: String?) {
    headers.removeAll { HTTPFieldName.equal($0.name, name) }
    if let value { headers.append((name, value)) }
  }
}

/// The head of a response.
struct TransportResponse: Sendable {
  var status: Int
  /// As received (a field sent twice appears twice).
  var headers: [(name: String, value: String)]
  /// Where it came from (after any redirect).
  var url: URL
  /// The HTTP major version (1, 2 or 3), when the transport can tell.
  var httpVersion: Int?

  /// The value of a field, matched without regard to case (the first, when sent twice).
  func header(_ name: String) -> String? {
    headers.first { HTTPFieldName.equal($0.name, name) }?.value
  }
}

/// Why an exchange ended early.
struct TransportError: Error, Sendable, Hashable {
  var message: String
  /// The exchange was cancelled (by the caller, or by a handler's refusal).
  var cancelled = false
  /// The server's certificate was not trusted: trying again cannot help.
  var untrusted = false

  /// The download's error for it.
  var downloadError: DownloadError {
    DownloadError(untrusted ? .untrustedServer : .network, message)
  }
}

/// What an exchange tells whoever started it, one call at a time, in order, on the transport's
/// thread: the response head, then the body in pieces, then the end. A redirect comes before the
/// head of the response it leads to. The handler may block (the disk is slow): the transport waits
/// for it, and with it the server.
protocol ExchangeHandler: AnyObject, Sendable {
  /// The response head; false ends the exchange without its body.
  func exchange(_ id: Int, didReceive response: TransportResponse) -> Bool
  /// A piece of the body; false ends the exchange.
  func exchange(_ id: Int, didReceive bytes: UnsafeRawBufferPointer) -> Bool
  /// A redirect from `current` (answered with `response`) to `next`, a copy of `current` at the
  /// new URL: the request to follow it with, or nil not to follow it (the exchange then ends).
  func exchange(
    _ id: Int, willRedirectFrom current: TransportRequest, response: TransportResponse,
    to next: TransportRequest
  ) -> TransportRequest?
  /// The end: nil when the body ended where the server framed it, else why not.
  func exchange(_ id: Int, didCompleteWith error: TransportError?)
}

/// Moves exchanges: HTTP GETs whose responses go to handlers. A transport is made for one run
/// (a transfer, or a segmented run's fetcher) and closed at its end.
protocol HTTPTransport: AnyObject, Sendable {
  /// Starts an exchange under `id` (the caller's, unique within this transport).
  func start(_ request: TransportRequest, id: Int, handler: any ExchangeHandler)
  /// Ends an exchange from any thread (a handler's call included); its end is still reported.
  func cancel(_ id: Int)
  /// Ends every exchange and lets waiting stop for good: the run is over or stopping.
  func cancelAll()
  /// Lets go of the connections once no exchange is running.
  func close()
  /// The most pieces of body held for the handlers at once (URLSession queues them; libcurl hands
  /// over one at a time).
  var peakBacklog: Int { get }
}

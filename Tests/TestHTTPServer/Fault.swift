import Foundation

/// A way in which one response departs from what a correct server would send.
///
/// Several faults can apply to one request (see ``FaultStep``). A redirect or status fault replaces
/// the response; `gzip` and `ignoreRange` change which representation is sent; the Content-Range
/// faults change a 206's header; `closeAfter`, `stall` and `trickle` change how any body, including
/// a status fault's, is written. When two faults of one kind apply, the first in the list wins.
public enum Fault: Sendable, Equatable {
  /// Sends the head as usual (its Content-Length still the full length) and then only the first
  /// `bytes` bytes of the body, then closes the connection without a `Connection: close` header;
  /// the client sees end of stream mid-body. If the body is shorter it is sent whole and the
  /// connection still closes. After a HEAD request, or with `bytes: 0`, only the head is sent.
  case closeAfter(bytes: Int)

  /// Answers 200 with the full body (and no Accept-Ranges header) even when a Range was asked for,
  /// like a server that does not support ranges.
  case ignoreRange

  /// A 206 whose Content-Range moves both the first and last position by `delta` while the body is
  /// still the requested bytes: `bytes S+delta-E+delta/TOTAL`. No effect on responses other than 206.
  case wrongContentRangeStart(delta: Int)

  /// A 206 whose Content-Range claims a total length of the real one plus `delta`:
  /// `bytes S-E/TOTAL+delta`. No effect on responses other than 206.
  case wrongContentRangeTotal(delta: Int)

  /// Answers with `status` and `body` (as `text/html; charset=utf-8`) instead of the resource,
  /// whether or not one is published: a 416 without Content-Range, a 500 or 503, or a 200 whose
  /// body is an HTML error page rather than the file. Bodies of 1xx, 204 and 304 are not sent.
  case status(Int, body: Data)

  /// Writes the body `bytesPerChunk` bytes at a time with `interval` between writes; `stop()` cuts
  /// the wait short and closes the connection.
  case trickle(bytesPerChunk: Int, interval: Duration)

  /// Sends the head and the first `afterBytes` body bytes, then writes nothing more and keeps the
  /// connection open until the server stops or the configured ``TestHTTPServer/Configuration/stallTimeout``
  /// passes, then closes it.
  case stall(afterBytes: Int)

  /// Answers `status` (301, 302, 303, 307 or 308) with `Location: location` and an empty body.
  /// The location is sent as given; for a cross-host redirect use the other of
  /// ``TestHTTPServer/baseURL`` and ``TestHTTPServer/localhostBaseURL``.
  case redirect(to: String, status: Int = 302)

  /// Answers 200 with `Content-Encoding: gzip`, the full body as one gzip member made of stored
  /// (uncompressed) deflate blocks, and a weak ETag derived from the resource's (`W/"…-gzip"`),
  /// ignoring Range and If-Range and sending no Accept-Ranges, the way compressing servers behave.
  case gzip

  /// Like ``gzip``, but only for a request whose Accept-Encoding names gzip (as nginx's `gzip on`
  /// answers): other requests get the resource as usual.
  case gzipForGzipClients

  /// Serves ranges whatever If-Range says, as a server that ignores If-Range does.
  case ignoreIfRange

  /// Answers every Range request with 416 (`Content-Range: bytes */TOTAL`), satisfiable or not.
  case refuseRanges

  /// Sends the resource's ETag with `-N` added inside its quotes, N counting the server's
  /// requests (`"v1-7"`), and matches If-Range against that: an ETag that changes with every
  /// request, as servers behind one name that disagree give.
  case etagPerRequest

  /// Sends the body with `Transfer-Encoding: chunked` and no Content-Length.
  case chunked

  /// Waits this long (or until the server stops) before sending anything.
  case delay(Duration)
}

/// The faults of one or more consecutive requests to a path.
public struct FaultStep: Sendable, Equatable {
  /// The faults of each request this step covers; empty for a correct response.
  public var faults: [Fault]
  /// How many requests this step covers; `nil` for every request from then on.
  public var requests: Int?

  /// A step covering `requests` requests (`nil`: all later requests).
  public init(_ faults: [Fault], requests: Int?) {
    self.faults = faults
    self.requests = requests
  }

  /// The next request only.
  public static func once(_ faults: Fault...) -> FaultStep { FaultStep(faults, requests: 1) }

  /// The next `count` requests.
  public static func times(_ count: Int, _ faults: Fault...) -> FaultStep {
    FaultStep(faults, requests: count)
  }

  /// Every request from then on.
  public static func always(_ faults: Fault...) -> FaultStep { FaultStep(faults, requests: nil) }
}

import Foundation
import KeyedArchive

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What every exchange of a download does the same way, whether it continues the partial file
/// (`Transfer`) or fetches one segment of it (`SegmentFetcher`).
enum HTTPExchange {
  /// A response header, matched without regard to case.
  static func header(_ response: HTTPURLResponse, _ name: String) -> String? {
    for (key, value) in response.allHeaderFields {
      if let key = key as? String, HTTPFieldName.equal(key, name) {
        return value as? String
      }
    }
    return nil
  }

  /// The request a redirect leads to: credentials dropped when it leaves the origin (Foundation
  /// on Linux copies every header to the new host), the range headers and
  /// `Accept-Encoding: identity` kept.
  static func redirect(
    _ task: URLSessionTask, to request: URLRequest, keeping rangeHeaders: [(String, String)]
  ) -> URLRequest {
    var next = request
    let from = task.currentRequest?.url ?? task.originalRequest?.url
    if let from, let to = next.url, !sameOrigin(from, to) {
      // Credentials are for the host they were given to.
      next.setValue(nil, forHTTPHeaderField: "Authorization")
      next.setValue(nil, forHTTPHeaderField: "Cookie")
    }
    for (name, value) in rangeHeaders { next.setValue(value, forHTTPHeaderField: name) }
    next.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
    return next
  }

  /// Why a redirect is not followed: only to http and https, as a download only starts from
  /// them. libcurl, under Foundation on Linux, would follow one to ftp as well.
  static func refusal(ofRedirectTo request: URLRequest) -> DownloadError? {
    if let url = request.url, ResumePlan.isHTTP(url.absoluteString) { return nil }
    return DownloadError(
      .unsupportedURL,
      "redirected to \(request.url?.absoluteString ?? "no URL"), which is not an http or https URL")
  }

  /// Cancels a task from another thread: cancelling runs synchronously on URLSession's work
  /// queue, which may be this very thread (delegate calls run on it) or may be waiting for room on
  /// a delegate queue that the caller has just opened.
  static func cancelElsewhere(_ task: URLSessionTask) {
    let task = UncheckedTask(task: task)
    DispatchQueue.global().async { task.task.cancel() }
  }

  private static func sameOrigin(_ lhs: URL, _ rhs: URL) -> Bool {
    lhs.scheme?.lowercased() == rhs.scheme?.lowercased()
      && lhs.host?.lowercased() == rhs.host?.lowercased() && lhs.port == rhs.port
  }
}

/// A task handed to another thread to be cancelled (URLSessionTask is thread-safe, but not marked
/// Sendable on Linux).
private struct UncheckedTask: @unchecked Sendable {
  let task: URLSessionTask
}

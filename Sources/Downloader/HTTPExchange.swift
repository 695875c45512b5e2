import Foundation
import KeyedArchive

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What every exchange of a download does the same way, whether it continues the partial file
/// (`Transfer`) or fetches one segment of it (`SegmentFetcher`), over either transport.
enum HTTPExchange {
  /// The request a redirect leads to: credentials dropped when it leaves the origin (Foundation
  /// on Linux copies every header to the new host, and the curl transport does as it does), the
  /// range headers and `Accept-Encoding: identity` kept.
  static func redirect(
    from current: TransportRequest, to next: TransportRequest,
    keeping rangeHeaders: [(String, String)]
  ) -> TransportRequest {
    var request = next
    if !sameOrigin(current.url, next.url) {
      // Credentials are for the host they were given to.
      request.setHeader("Authorization", nil)
      request.setHeader("Cookie", nil)
    }
    for (name, value) in rangeHeaders { request.setHeader(name, value) }
    request.setHeader("Accept-Encoding", "identity")
    return request
  }

  /// Why a redirect is not followed: only to http and https, as a download only starts from
  /// them. libcurl, under Foundation on Linux, would follow one to ftp as well.
  static func refusal(ofRedirectTo url: URL) -> DownloadError? {
    if ResumePlan.isHTTP(url.absoluteString) { return nil }
    return DownloadError(
      .unsupportedURL,
      "redirected to \(url.absoluteString), which is not an http or https URL")
  }

  /// The reason phrase of a status, as Foundation words it.
  static func reason(_ status: Int) -> String {
    HTTPURLResponse.localizedString(forStatusCode: status)
  }

  private static func sameOrigin(_ lhs: URL, _ rhs: URL) -> Bool {
    lhs.scheme?.lowercased() == rhs.scheme?.lowercased()
      && lhs.host?.lowercased() == rhs.host?.lowercased() && lhs.port == rhs.port
  }
}

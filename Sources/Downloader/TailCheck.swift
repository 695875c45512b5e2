import Foundation
import ResumeData

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Whether a partial file on disk is the start of the file a validator names: its last bytes
/// fetched again under `Range` and `If-Range` and compared, before resume data stamps that
/// validator on bytes this toolkit did not fetch (`resumedata make`).
///
/// One request, reading at most the bytes compared. A match shows the end of the partial file is
/// the server's under that validator; it does not show every earlier byte is (nothing short of
/// fetching them could).
public struct TailCheck: Sendable, Hashable {
  /// `tail-verified` (info) when the bytes match, else the error that refuses them:
  /// `tail-mismatch`, `validator-mismatch`, `partial-longer-than-file`, `partial-complete`,
  /// `tail-unverifiable` (docs/findings.md).
  public var finding: Finding
  /// The status of the answer.
  public var status: Int
  /// The complete length the server gave, when it gave one.
  public var total: Int64?
  /// The bytes compared, from the partial file's end.
  public var range: ClosedRange<Int64>

  /// Whether the bytes match (the finding is `tail-verified`).
  public var matches: Bool { finding.code == "tail-verified" }

  /// Fetches the last `tail.count` bytes of the first `size` bytes of `url` with `If-Range:
  /// validator` and compares them with `tail`.
  ///
  /// - Parameters:
  ///   - url: the URL (redirects are followed).
  ///   - headers: header fields to send (authorization, say).
  ///   - validator: the ETag or Last-Modified date the partial file is said to belong to.
  ///   - size: the partial file's size.
  ///   - tail: its last bytes (at most `size`; 64 KiB is plenty).
  ///   - timeout: the time the request may take.
  /// - Throws: `ProbeError` when the request gets no answer, or its arguments are invalid.
  public static func verify(
    url: URL, headers: [(name: String, value: String)] = [], validator: String, size: Int64,
    tail: Data, timeout: Duration = .seconds(30)
  ) async throws(ProbeError) -> TailCheck {
    // On a thread of its own, as a probe runs.
    let result = await withCheckedContinuation {
      (continuation: CheckedContinuation<Result<TailCheck, ProbeError>, Never>) in
      Thread {
        continuation.resume(
          returning: verifySynchronously(
            url: url, headers: headers, validator: validator, size: size, tail: tail,
            timeout: timeout))
      }.start()
    }
    return try result.get()
  }

  /// `verify(url:headers:validator:size:tail:timeout:)`, blocking the calling thread (for a
  /// command-line tool's main thread; never call it from Swift concurrency's pool).
  public static func verifySynchronously(
    url: URL, headers: [(name: String, value: String)] = [], validator: String, size: Int64,
    tail: Data, timeout: Duration = .seconds(30)
  ) -> Result<TailCheck, ProbeError> {
    do throws(ProbeError) {
      return .success(
        try check(
          url: url, headers: headers, validator: validator, size: size, tail: tail,
          timeout: timeout))
    } catch {
      return .failure(error)
    }
  }

  private static func check(
    url: URL, headers: [(name: String, value: String)], validator: String, size: Int64,
    tail: Data, timeout: Duration
  ) throws(ProbeError) -> TailCheck {
    var options = ProbeOptions()
    options.headers = headers
    options.timeout = timeout
    try Probe.check(url, options)
    guard size > 0, !tail.isEmpty, Int64(tail.count) <= size else {
      throw ProbeError(.invalidOption, "the partial file holds no bytes to compare")
    }
    let start = size - Int64(tail.count)
    let range = start...(size - 1)
    var request = URLRequest(url: url)
    request.httpMethod = "GET"
    request.cachePolicy = .reloadIgnoringLocalCacheData
    for (name, value) in headers { request.addValue(value, forHTTPHeaderField: name) }
    request.setValue("bytes=\(start)-\(size - 1)", forHTTPHeaderField: "Range")
    request.setValue(validator, forHTTPHeaderField: "If-Range")
    request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
    let exchange = ProbeExchange(request, bodyLimit: tail.count, maximumRedirects: 10)
    let answer: ProbeExchange.Answer
    switch exchange.run(until: .now + timeout) {
    case .success(let got): answer = got
    case .failure(let error): throw error
    }
    let response = ProbeResponse(
      kind: .ifRange, url: url.absoluteString, sent: [], redirects: answer.redirects,
      finalURL: answer.url.absoluteString, status: answer.status,
      headers: answer.headers.map { ProbeResponse.HeaderField($0.name, $0.value) },
      body: answer.body)
    let total = response.status == 416 ? response.contentRange?.total : response.completeLength
    func result(_ code: String, _ severity: Finding.Severity, _ message: String) -> TailCheck {
      TailCheck(
        finding: Finding(code, severity, message), status: response.status, total: total,
        range: range)
    }
    let what = "Range: bytes=\(start)-\(size - 1) with If-Range: \(validator)"
    switch response.status {
    case 206:
      if let total, total < size {
        return result(
          "partial-longer-than-file", .error,
          "the partial file holds \(size) bytes, but the server's file has \(total): it is not the start of that file"
        )
      }
      guard response.contentRange?.range == range, response.contentEncoding == nil,
        answer.body.count == tail.count
      else {
        return result(
          "tail-unverifiable", .error,
          "\(what) was answered 206 with Content-Range: \(response.header("Content-Range") ?? "none")\(response.contentEncoding.map { ", \($0)-encoded" } ?? ""): not the bytes asked for"
        )
      }
      if let offset = zip(answer.body, tail).enumerated().first(where: {
        $0.element.0 != $0.element.1
      })?
      .offset {
        return result(
          "tail-mismatch", .error,
          "byte \(start + Int64(offset)) of the partial file differs from the server's under \(validator) (its last \(tail.count) bytes were compared): the partial file is not the start of that file"
        )
      }
      if let total, total == size {
        return result(
          "partial-complete", .error,
          "the partial file already holds the whole file (\(total) bytes): use it as it is (a resume would ask for bytes past its end and start over)"
        )
      }
      return result(
        "tail-verified", .info,
        "the partial file's last \(tail.count) bytes (from byte \(start)) are the server's under \(validator) (206\(total.map { " of \($0) bytes" } ?? ""))"
      )
    case 200:
      let now = [
        response.entityTag.map { "ETag \($0)" },
        response.lastModified.map { "Last-Modified \($0)" },
      ].compactMap { $0 }
      return result(
        "validator-mismatch", .error,
        "\(what) was answered 200: the server's file is not the one \(validator) names\(now.isEmpty ? "" : " (it now has \(now.joined(separator: ", ")))")"
      )
    case 416:
      if let total, total < size {
        return result(
          "partial-longer-than-file", .error,
          "the partial file holds \(size) bytes, but the server's file has \(total): it is not the start of that file"
        )
      }
      return result(
        "tail-unverifiable", .error,
        "\(what) was answered 416 Range Not Satisfiable\(total.map { " (the file has \($0) bytes)" } ?? "")"
      )
    default:
      return result(
        "tail-unverifiable", .error, "\(what) was answered \(response.statusText)")
    }
  }
}

import Foundation
import KeyedArchive
import ResumeData

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// "Will this URL resume, and if not, why": a handful of small requests to a URL, never its whole
/// body, and what each consumer (Apple's two loaders, this toolkit's downloader, `curl -C -`,
/// `wget -c`) would do when a download of it is interrupted and resumed.
///
/// The requests, each on a connection of its own (a URLSession of its own), all GET:
/// 1. the plain request with `Accept-Encoding: identity`, redirects followed and recorded, its head
///    alone read;
/// 2. `Range` for the first bytes, then for bytes in the middle (alone, as curl and wget ask),
///    then the same with `If-Range` = the server's validator (as this toolkit asks) and with a
///    validator it never gave, each reading at most `rangeLength` bytes;
/// 3. the plain request again, `requests − 1` times, to see the validators and length hold;
/// 4. the plain request with URLSession's default `Accept-Encoding` (or the one given), then
///    `Range` with `If-Range` = the validator of that answer: what Apple's loaders record and send.
///
/// Bounded: at most `requests + 6` requests, `4 × rangeLength` body bytes, and `timeout` in all.
public enum Probe {
  /// Probes `url`.
  ///
  /// - Throws: `ProbeError`: `.unsupportedURL` for anything but an http or https URL with a host,
  ///   `.invalidOption` for a header field that cannot be sent or options out of range,
  ///   `.network`, `.timedOut` or `.redirect` when a request gets no answer.
  public static func run(_ url: URL, options: ProbeOptions = ProbeOptions())
    async throws(ProbeError)
    -> ProbeReport
  {
    try check(url, options)
    // On a thread of its own: the exchanges wait for URLSession's threads, never for Swift
    // concurrency's pool, which a busy process (or test run) may keep from it past the timeout.
    let result = await withCheckedContinuation {
      (continuation: CheckedContinuation<Result<ProbeReport, ProbeError>, Never>) in
      Thread {
        continuation.resume(returning: runSynchronously(url, options: options))
      }.start()
    }
    return try result.get()
  }

  /// `run(_:options:)`, blocking the calling thread until the probe ends (for a command-line
  /// tool's main thread; never call it from Swift concurrency's pool).
  public static func runSynchronously(_ url: URL, options: ProbeOptions = ProbeOptions())
    -> Result<ProbeReport, ProbeError>
  {
    do throws(ProbeError) {
      try check(url, options)
      var run = ProbeRun(url: url, options: options)
      return .success(try run.run())
    } catch {
      return .failure(error)
    }
  }

  /// The findings and verdicts of a probe whose answers are `responses`, in the order the probe
  /// makes them (the first a `.plain` one): the judgement alone, without a request.
  public static func judge(
    _ url: String, responses: [ProbeResponse], options: ProbeOptions = ProbeOptions()
  ) -> (findings: [Finding], verdicts: [ProbeVerdict]) {
    let judged = ProbeJudgement(url: url, responses: responses, options: options)
    return (judged.findings, judged.verdicts)
  }

  /// Refuses what cannot be probed, before any request.
  static func check(_ url: URL, _ options: ProbeOptions) throws(ProbeError) {
    guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
      let host = url.host, !host.isEmpty
    else {
      throw ProbeError(.unsupportedURL, "\(url.absoluteString) is not an http or https URL")
    }
    for (name, value) in options.headers {
      if let problem = URLRequestFields.Header(name, value).problem {
        throw ProbeError(.invalidOption, problem)
      }
    }
    guard ProbeOptions.requestRange.contains(options.requests) else {
      throw ProbeError(
        .invalidOption,
        "the requests must number \(ProbeOptions.requestRange.lowerBound) to \(ProbeOptions.requestRange.upperBound)"
      )
    }
    guard options.timeout > .zero else {
      throw ProbeError(.invalidOption, "the timeout must be positive")
    }
  }
}

/// One probe's requests, in order.
private struct ProbeRun {
  let url: URL
  let options: ProbeOptions
  let deadline: ContinuousClock.Instant
  var responses: [ProbeResponse] = []

  init(url: URL, options: ProbeOptions) {
    self.url = url
    self.options = options
    deadline = .now + options.timeout
  }

  /// The `Accept-Encoding` the requests standing for Apple's loaders send.
  var appleEncoding: String {
    options.headers.last { $0.name.caseInsensitiveCompare("Accept-Encoding") == .orderedSame }?
      .value ?? ProbeOptions.urlSessionAcceptEncoding
  }

  mutating func run() throws(ProbeError) -> ProbeReport {
    let first = try ask(.plain, url, [("Accept-Encoding", "identity")], body: 0)
    let final = URL(string: first.finalURL) ?? url
    if (200..<300).contains(first.status), first.status != 206 {
      let length = max(1, min(Int64(options.rangeLength), first.completeLength ?? Int64.max))
      if first.completeLength != 0 {
        let start = try ask(
          .rangeStart, final, identity(range: 0, length), body: Int(length))
        let total = first.completeLength ?? start.completeLength
        // The middle of the file, or past the first range when the length is unknown.
        let middle = total.map { $0 >= 2 ? $0 / 2 : 0 } ?? length
        let span = total.map { max(1, min(length, $0 - middle)) } ?? length
        _ = try ask(.rangeMiddle, final, identity(range: middle, span), body: Int(span))
        if let validator = ProbeRunValidator.strong(first) {
          let wrong =
            validator.hasPrefix("\"") || validator.hasPrefix("W/")
            ? "\"resumedata-probe-mismatch\"" : "Thu, 01 Jan 1970 00:00:00 GMT"
          _ = try ask(
            .ifRange, final, identity(range: middle, span) + [("If-Range", validator)],
            body: Int(span))
          _ = try ask(
            .wrongIfRange, final, identity(range: middle, span) + [("If-Range", wrong)],
            body: Int(span))
        }
        for _ in 1..<options.requests {
          _ = try ask(.repeated, url, [("Accept-Encoding", "identity")], body: 0)
        }
        if options.asksAsAppleLoaders {
          let encoded = try ask(
            .defaultEncoding, url, [("Accept-Encoding", appleEncoding)], body: 0)
          // CFNetwork sends the ETag it recorded, weak or not, else the date (format reference §6).
          if (200..<300).contains(encoded.status),
            let validator = encoded.entityTag ?? encoded.lastModified
          {
            let encodedFinal = URL(string: encoded.finalURL) ?? url
            _ = try ask(
              .defaultEncodingIfRange, encodedFinal,
              [
                ("Range", "bytes=\(middle)-"), ("If-Range", validator),
                ("Accept-Encoding", appleEncoding),
              ], body: 0)
          }
        }
      }
    }
    let judged = ProbeJudgement(
      url: url.absoluteString, responses: responses, options: options)
    return ProbeReport(
      url: url.absoluteString, finalURL: first.finalURL, responses: responses,
      findings: judged.findings, verdicts: judged.verdicts)
  }

  private func identity(range start: Int64, _ count: Int64) -> [(String, String)] {
    [("Range", "bytes=\(start)-\(start + count - 1)"), ("Accept-Encoding", "identity")]
  }

  /// Makes one request: the options' fields, then `fields` over them.
  private mutating func ask(
    _ kind: ProbeRequestKind, _ target: URL, _ fields: [(String, String)], body: Int
  ) throws(ProbeError) -> ProbeResponse {
    var request = URLRequest(url: target)
    request.httpMethod = "GET"
    request.cachePolicy = .reloadIgnoringLocalCacheData
    let credentials = ["authorization", "cookie"]
    for (name, value) in options.headers {
      // Credentials given for the URL are not sent to another origin the chain led to.
      if credentials.contains(name.lowercased()), !ProbeExchange.sameOrigin(url, target) {
        continue
      }
      request.addValue(value, forHTTPHeaderField: name)
    }
    for (name, value) in fields { request.setValue(value, forHTTPHeaderField: name) }
    let exchange = ProbeExchange(
      request, bodyLimit: body, maximumRedirects: options.maximumRedirects)
    let answer: ProbeExchange.Answer
    switch exchange.run(until: deadline) {
    case .success(let got): answer = got
    case .failure(let error): throw error
    }
    let response = ProbeResponse(
      kind: kind, url: target.absoluteString,
      sent: fields.map { ProbeResponse.HeaderField($0.0, $0.1) }, redirects: answer.redirects,
      finalURL: answer.url.absoluteString, status: answer.status,
      headers: answer.headers.map { ProbeResponse.HeaderField($0.name, $0.value) },
      body: answer.body)
    responses.append(response)
    return response
  }
}

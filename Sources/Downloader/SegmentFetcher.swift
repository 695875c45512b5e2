import Foundation
import PortableFoundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The connections of a segmented run: one URLSession whose data tasks each fetch one segment
/// (`Range: bytes=S-E`, `If-Range`) and write it at its offset.
///
/// Every response is held to what was asked: a 206 for exactly that range of the same total, not
/// encoded, with the same validator. Anything else that says the file may have changed (a 200, a
/// 416, another range or total, another validator) stops the whole run, which then starts over:
/// no file is ever assembled from two versions of the resource. The first request of a new run
/// (the probe) asks for everything from the prefix already on disk (`bytes=R-`); only a 206 with a
/// known total and a strong validator lets the run go on in segments.
final class SegmentFetcher: NSObject, URLSessionDataDelegate, @unchecked Sendable {
  /// How one fetch ended.
  enum Outcome: Sendable, Hashable {
    /// The segment is on disk.
    case done
    /// The file is not the one being assembled: start the download over.
    case restart(String)
    /// The fetch failed (retryable or not, as the error says).
    case failed(DownloadError)
    /// The run is stopping.
    case stopped
    /// The probe's answer does not allow segments; the download goes on over one connection.
    case fallback(String)
  }

  /// What the probe found out, handed to `onProbe` before any byte is written.
  struct ProbeAnswer: Sendable {
    var identity: SegmentBook.Identity
    /// The URL the answer came from (after redirects).
    var url: URL?
  }

  private struct Exchange {
    var worker: Int
    /// The segment's start (its key in the schedule); for the probe, the prefix on disk.
    var start: Int64
    /// The range asked for; nil for the probe (`bytes=start-`).
    var range: ClosedRange<Int64>?
    var continuation: CheckedContinuation<Outcome, Never>?
    var outcome: Outcome?
    var writing = false
    var lastByte = ContinuousClock.now
    var task: URLSessionDataTask?
  }

  private struct State {
    var exchanges: [Int: Exchange] = [:]
    var url: URL?
    var stopped = false
  }

  private let book: SegmentBook
  private let file: SegmentFile
  private let baseRequest: URLRequest
  // The If-Range of a probe that continues a prefix already on disk (nil from byte 0).
  private let probeValidator: String?
  private let delegateQueue: DelegateQueue
  private let state = Locked(State())
  // Runs on the delegate queue when the probe's answer allows segments, before its body is let in:
  // the download sets up the schedule, persists the map and allocates the file. An error (it
  // could not) fails the probe.
  private let onProbe: @Sendable (ProbeAnswer) -> DownloadError?
  private let emit: @Sendable (DownloadEvent) -> Void
  private var session: URLSession!

  /// A fetcher of segments of `request` (its Range and If-Range are set for each fetch).
  init(
    book: SegmentBook, file: SegmentFile, request: URLRequest, probeValidator: String?,
    connections: Int, maximumQueuedChunks: Int, configuration: URLSessionConfiguration,
    emit: @escaping @Sendable (DownloadEvent) -> Void,
    onProbe: @escaping @Sendable (ProbeAnswer) -> DownloadError?
  ) {
    self.book = book
    self.file = file
    baseRequest = request
    self.probeValidator = probeValidator
    self.emit = emit
    self.onProbe = onProbe
    delegateQueue = DelegateQueue(limit: maximumQueuedChunks)
    super.init()
    configuration.httpMaximumConnectionsPerHost = max(connections, 1)
    session = URLSession(
      configuration: configuration, delegate: self, delegateQueue: delegateQueue)
  }

  /// The URL the segments are fetched from (the request's, or where a redirect led).
  var url: URL? { state.withLock { $0.url ?? baseRequest.url } }

  /// Ends every fetch (they return `.stopped` unless they already ended) and the session.
  func close() {
    cancelAll()
    session.invalidateAndCancel()
  }

  /// Stops every fetch in flight: each returns `.stopped` unless it already has an outcome.
  func cancelAll() {
    let tasks = state.withLock { state -> [URLSessionDataTask] in
      state.stopped = true
      var tasks = [URLSessionDataTask]()
      for (id, exchange) in state.exchanges {
        if exchange.outcome == nil { state.exchanges[id]?.outcome = .stopped }
        if let task = exchange.task { tasks.append(task) }
      }
      return tasks
    }
    delegateQueue.open()
    for task in tasks { HTTPExchange.cancelElsewhere(task) }
  }

  /// Fails every fetch that has had no byte for `timeout` (they are retried).
  func failStalled(after timeout: Duration) {
    let now = ContinuousClock.now
    let stalled = state.withLock { state -> [URLSessionDataTask] in
      var tasks = [URLSessionDataTask]()
      for (id, exchange) in state.exchanges where now - exchange.lastByte > timeout {
        guard exchange.outcome == nil, let task = exchange.task else { continue }
        state.exchanges[id]?.outcome = .failed(
          DownloadError(.stalled, "no byte arrived for \(timeout.components.seconds) s"))
        tasks.append(task)
      }
      return tasks
    }
    for task in stalled { HTTPExchange.cancelElsewhere(task) }
  }

  /// Fetches a segment (or, with `range` nil, probes from `start`), writing it into the file.
  func fetch(worker: Int, start: Int64, range: ClosedRange<Int64>?) async -> Outcome {
    var request = baseRequest
    if let url = state.withLock({ $0.url }) { request.url = url }
    let validator = range == nil ? probeValidator : book.identity?.validator
    var headers: [(String, String)] = []
    if let range {
      headers.append(("Range", "bytes=\(range.lowerBound)-\(range.upperBound)"))
    } else {
      headers.append(("Range", "bytes=\(start)-"))
    }
    if let validator, !validator.isEmpty { headers.append(("If-Range", validator)) }
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    return await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
      let task = session.dataTask(with: request)
      let stopped = state.withLock { state -> Bool in
        state.exchanges[task.taskIdentifier] = Exchange(
          worker: worker, start: start, range: range, continuation: continuation,
          outcome: state.stopped ? .stopped : nil, task: task)
        return state.stopped
      }
      if stopped {
        state.withLock { _ = $0.exchanges.removeValue(forKey: task.taskIdentifier) }
        continuation.resume(returning: .stopped)
        return
      }
      task.resume()
    }
  }

  // MARK: URLSessionDataDelegate

  func urlSession(
    _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
  ) {
    let id = dataTask.taskIdentifier
    guard let exchange = state.withLock({ $0.exchanges[id] }), exchange.outcome == nil else {
      completionHandler(.cancel)
      return
    }
    guard let http = response as? HTTPURLResponse else {
      end(id, .failed(DownloadError(.network, "the response is not HTTP")))
      completionHandler(.cancel)
      return
    }
    let decision =
      exchange.range.map { judge(http, asked: $0) } ?? judgeProbe(http, from: exchange.start)
    if let decision {
      end(id, decision)
      completionHandler(.cancel)
      return
    }
    state.withLock { $0.exchanges[id]?.writing = true }
    completionHandler(.allow)
  }

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    let id = dataTask.taskIdentifier
    guard
      let exchange = state.withLock({ state -> Exchange? in
        state.exchanges[id]?.lastByte = .now
        return state.exchanges[id]
      }), exchange.writing, exchange.outcome == nil
    else { return }
    let claim = book.claim(exchange.start, worker: exchange.worker, count: data.count)
    var complete = false
    if claim.count == 0 {
      complete = book.isDone(exchange.start)
    } else {
      let failure = data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> DownloadError? in
        do throws(DownloadError) {
          try file.write(UnsafeRawBufferPointer(rebasing: bytes[0..<claim.count]), at: claim.offset)
          return nil
        } catch {
          return error
        }
      }
      if let error = failure {
        book.stop(.failed(error))
        end(id, .failed(error))
        HTTPExchange.cancelElsewhere(dataTask)
        return
      }
      complete = book.commit(exchange.start, through: claim.offset + Int64(claim.count))
    }
    // The rest belongs to the next segment (its end moved when another connection took it over),
    // or the run is stopping: this connection's part is over.
    if complete || claim.count < data.count {
      end(id, complete ? .done : .stopped)
      HTTPExchange.cancelElsewhere(dataTask)
    }
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask,
    willPerformHTTPRedirection response: HTTPURLResponse,
    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
  ) {
    if let refusal = HTTPExchange.refusal(ofRedirectTo: request) {
      end(task.taskIdentifier, .failed(refusal))
      completionHandler(nil)
      return
    }
    let rangeHeaders = ["Range", "If-Range"].compactMap { name in
      task.currentRequest?.value(forHTTPHeaderField: name).map { (name, $0) }
    }
    let next = HTTPExchange.redirect(task, to: request, keeping: rangeHeaders)
    if let url = next.url {
      let probe = state.withLock { state -> Bool in
        let probe = state.exchanges[task.taskIdentifier]?.range == nil
        if probe { state.url = url }
        return probe
      }
      if probe { emit(.redirected(url)) }
    }
    completionHandler(next)
  }

  func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
    let id = task.taskIdentifier
    guard let exchange = state.withLock({ $0.exchanges.removeValue(forKey: id) }) else { return }
    var outcome = exchange.outcome
    if outcome == nil {
      if let error {
        outcome = .failed(DownloadError(.network, error.localizedDescription))
      } else if exchange.range != nil, book.isDone(exchange.start) {
        outcome = .done
      } else {
        outcome = .failed(
          DownloadError(
            .network,
            "the connection for bytes \(describe(exchange)) ended before the segment was complete"))
      }
    }
    exchange.continuation?.resume(returning: outcome ?? .stopped)
  }

  // MARK: Deciding

  /// What a segment's response means: nil to write its body, else how the fetch ends.
  private func judge(_ response: HTTPURLResponse, asked: ClosedRange<Int64>) -> Outcome? {
    let asking = "bytes \(asked.lowerBound)-\(asked.upperBound)"
    let status = response.statusCode
    guard let identity = book.identity else {
      return .failed(DownloadError(.network, "a segment was fetched before the file was known"))
    }
    switch status {
    case 206:
      if let encoding = encoding(response) {
        return .restart("the 206 response for \(asking) is \(encoding) encoded")
      }
      let value = HTTPExchange.header(response, "Content-Range") ?? ""
      guard let contentRange = HTTPRange.parseContentRange(value),
        contentRange.range == asked, contentRange.total == identity.total
      else {
        return .restart(
          "the server answered \(asking) with Content-Range \(String(reflecting: value)), not \(asking)/\(identity.total)"
        )
      }
      if let changed = changedValidator(response, identity) {
        return .restart("the 206 response for \(asking) \(changed)")
      }
      return nil
    case 200:
      guard hasValidator(response) else {
        return .failed(
          DownloadError(
            .badPartialResponse,
            "the server answered 200 without an ETag or Last-Modified for \(asking): not taken for the file"
          ))
      }
      return .restart(
        "the server sent the whole file (200) for \(asking): it changed, or ignores ranges")
    case 416:
      return .restart("the server cannot satisfy \(asking) (416)")
    default:
      return .failed(Self.statusError(status))
    }
  }

  /// What the probe's response means: nil to go on in segments (after `onProbe` set them up),
  /// else how the probe ends (`.fallback` to go on over one connection).
  private func judgeProbe(_ response: HTTPURLResponse, from start: Int64) -> Outcome? {
    let status = response.statusCode
    guard status == 206 else {
      if status == 200 || status == 416 || (200...299).contains(status) {
        return .fallback(
          status == 200
            ? "the server does not serve byte ranges (it answered 200 to bytes=\(start)-)"
            : "the server answered \(status) to bytes=\(start)-")
      }
      return .failed(Self.statusError(status))
    }
    if let encoding = encoding(response) {
      return .fallback("the server sends the file \(encoding) encoded")
    }
    guard let value = HTTPExchange.header(response, "Content-Range"),
      let contentRange = HTTPRange.parseContentRange(value), let range = contentRange.range,
      let total = contentRange.total, range.lowerBound == start, range.upperBound == total - 1
    else {
      return .fallback("the server's 206 does not continue bytes=\(start)- with a known length")
    }
    let tag = HTTPExchange.header(response, "ETag").flatMap { $0.hasPrefix("W/") ? nil : $0 }
    let lastModified = HTTPExchange.header(response, "Last-Modified")
    guard tag != nil || lastModified != nil else {
      return .fallback(
        "the server sent no strong ETag or Last-Modified, so segments could not be matched")
    }
    let identity = SegmentBook.Identity(total: total, entityTag: tag, lastModified: lastModified)
    // Resuming a prefix: the If-Range sent with the probe already made the server compare; a
    // validator that still differs is a server that ignored it.
    if start > 0, let expected = probeValidator, expected != tag, expected != lastModified {
      return .fallback("the response's validator is not the recorded \(expected)")
    }
    if let error = onProbe(ProbeAnswer(identity: identity, url: response.url)) {
      return .failed(error)
    }
    return nil
  }

  /// How the response's validator differs from the one the run is assembling, if it does.
  private func changedValidator(
    _ response: HTTPURLResponse, _ identity: SegmentBook.Identity
  ) -> String? {
    if let tag = identity.entityTag {
      let sent = HTTPExchange.header(response, "ETag")
      return sent == tag ? nil : "carries ETag \(sent ?? "none"), not \(tag)"
    }
    if let date = identity.lastModified,
      let sent = HTTPExchange.header(response, "Last-Modified"), sent != date
    {
      return "carries Last-Modified \(sent), not \(date)"
    }
    return nil
  }

  private func hasValidator(_ response: HTTPURLResponse) -> Bool {
    HTTPExchange.header(response, "ETag") != nil
      || HTTPExchange.header(response, "Last-Modified") != nil
  }

  /// The response's content coding, when it is not the identity.
  private func encoding(_ response: HTTPURLResponse) -> String? {
    let encoding = HTTPExchange.header(response, "Content-Encoding")?.lowercased()
    return encoding == nil || encoding == "identity" ? nil : encoding
  }

  private static func statusError(_ status: Int) -> DownloadError {
    DownloadError(
      .httpStatus,
      "the server answered \(status) \(HTTPURLResponse.localizedString(forStatusCode: status))",
      status: status)
  }

  private func describe(_ exchange: Exchange) -> String {
    exchange.range.map { "\($0.lowerBound)-\($0.upperBound)" } ?? "\(exchange.start)-"
  }

  /// Records how a fetch ends; the first decision wins. The fetch returns from
  /// `didCompleteWithError`, which URLSession always sends last (after a cancel too).
  private func end(_ id: Int, _ outcome: Outcome) {
    state.withLock { state in
      if state.exchanges[id]?.outcome == nil { state.exchanges[id]?.outcome = outcome }
    }
  }
}

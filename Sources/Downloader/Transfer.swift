import Foundation
import PortableFoundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// One HTTP exchange of a download: a URLSession data task whose delegate decides, from the
/// response, whether the body continues the partial file, replaces it, completes it or must not
/// touch it, and then writes each chunk as it arrives (so memory stays bounded).
///
/// The task is never suspended and resumed (Foundation on Linux restarts it from byte 0 and
/// appends); stopping cancels it.
final class Transfer: NSObject, URLSessionDataDelegate, @unchecked Sendable {
  /// How the exchange ended.
  enum Outcome: Sendable, Hashable {
    /// The body was the rest of the file (or the whole file), and it all arrived.
    case complete
    /// Everything asked for was already on disk (416 naming the local length).
    case alreadyComplete
    /// The partial file cannot be continued: start over, for this reason.
    case restart(String)
    /// The exchange failed.
    case failed(DownloadError)
    /// The download was paused or cancelled.
    case stopped
  }

  /// What the request asked for, to judge the response against.
  struct Expectation: Sendable {
    /// Bytes on disk when the request went out.
    var offset: Int64
    /// Whether a Range header was sent.
    var sentRange: Bool
    /// The complete length, when an earlier response told it.
    var knownTotal: Int64?
  }

  /// What the responses told, for the next request and the resume data.
  struct Learned: Sendable {
    var status: Int?
    var entityTag: String?
    var lastModified: String?
    var total: Int64?
    var url: URL?
    var bodyExpected: Int64?
    var bodyReceived: Int64 = 0
    var restartReason: String?
    /// Whether the body went into the file (then the validators above describe it).
    var wrote = false
  }

  private struct State {
    var outcome: Outcome?
    var continuation: CheckedContinuation<Outcome, Never>?
    var learned = Learned()
    var writing = false
    var lastByte = ContinuousClock.now
    var task: URLSessionDataTask?
  }

  private let file: PartialFile
  private let expectation: Expectation
  private let emit: @Sendable (DownloadEvent) -> Void
  // Told what the response says before its body is let in (the download persists it first);
  // runs on the delegate queue.
  private let accept: @Sendable (Learned) -> Void
  private let state = Locked(State())
  // Serial: URLSession calls the delegate one call at a time, in order. Bounded, so that a
  // delegate behind the network holds libcurl back instead of queueing the whole body.
  private let delegateQueue: DelegateQueue
  // The Range and If-Range sent, carried over every redirect.
  private let rangeHeaders: [(String, String)]

  init(
    file: PartialFile, expectation: Expectation, rangeHeaders: [(String, String)],
    maximumQueuedChunks: Int, emit: @escaping @Sendable (DownloadEvent) -> Void,
    accept: @escaping @Sendable (Learned) -> Void
  ) {
    self.file = file
    self.expectation = expectation
    self.rangeHeaders = rangeHeaders
    self.delegateQueue = DelegateQueue(limit: maximumQueuedChunks)
    self.emit = emit
    self.accept = accept
  }

  /// What the responses told so far.
  var learned: Learned { state.withLock { $0.learned } }

  /// The most deliveries (each one chunk of at most 16 KiB) URLSession had queued for this
  /// delegate at once while it was held back.
  var peakBacklog: Int { delegateQueue.peakBacklog }

  /// When the last body byte arrived (or the request went out).
  var lastByte: ContinuousClock.Instant { state.withLock { $0.lastByte } }

  /// Sends the request and waits for the exchange to end.
  func run(_ request: URLRequest, configuration: URLSessionConfiguration) async -> Outcome {
    let session = URLSession(
      configuration: configuration, delegate: self, delegateQueue: delegateQueue)
    let outcome = await withCheckedContinuation {
      (continuation: CheckedContinuation<Outcome, Never>) in
      let task = session.dataTask(with: request)
      let stopped = state.withLock { state -> Bool in
        state.continuation = continuation
        state.task = task
        state.learned.url = request.url
        state.lastByte = .now
        return state.outcome != nil
      }
      task.resume()
      // A stop that came before the task existed cancels it now.
      if stopped { cancel(task) }
    }
    // The session holds its delegate until it is invalidated.
    delegateQueue.open()
    session.invalidateAndCancel()
    return outcome
  }

  /// Ends the exchange with `outcome` (unless it already has one) by cancelling its task.
  func stop(_ outcome: Outcome) {
    let task = state.withLock { state -> URLSessionDataTask? in
      if state.outcome == nil { state.outcome = outcome }
      return state.task
    }
    if let task { cancel(task) }
  }

  /// Cancels the task. Cancelling runs synchronously on URLSession's work queue, which may be
  /// waiting for room on the delegate queue (so that stops holding it back first), or may be this
  /// very thread (delegate calls can run on it): the cancel itself is made from elsewhere.
  private func cancel(_ task: URLSessionTask) {
    delegateQueue.open()
    HTTPExchange.cancelElsewhere(task)
  }

  // MARK: URLSessionDataDelegate

  func urlSession(
    _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
  ) {
    guard let http = response as? HTTPURLResponse else {
      finish(.failed(DownloadError(.network, "the response is not HTTP")))
      completionHandler(.cancel)
      return
    }
    let decision = judge(http)
    let encoding = HTTPExchange.header(http, "Content-Encoding")?.lowercased()
    // libcurl decodes an encoded body, so its Content-Length is not the number of bytes written.
    let plain = encoding == nil || encoding == "identity"
    state.withLock { state in
      state.learned.status = http.statusCode
      // Only a body that goes into the file says what the file is.
      if case .write = decision.action {
        state.learned.wrote = true
        state.learned.entityTag = HTTPExchange.header(http, "ETag")
        state.learned.lastModified = HTTPExchange.header(http, "Last-Modified")
        state.learned.bodyExpected =
          plain ? HTTPExchange.header(http, "Content-Length").flatMap { Int64($0) } : nil
      }
      if let total = decision.total { state.learned.total = total }
      if let url = http.url { state.learned.url = url }
    }
    switch decision.action {
    case .write(let restartReason):
      if let restartReason {
        do {
          try file.truncate()
        } catch {
          finish(.failed(error))
          completionHandler(.cancel)
          return
        }
        state.withLock { $0.learned.restartReason = restartReason }
        emit(.restarted(reason: restartReason))
      }
      // The body is let in only once the download has recorded the validators it belongs to, so
      // that a process killed at any later instant leaves resume data that can continue it.
      // Foundation on Linux delivers body data before the completion handler below is called,
      // so holding the handler back would not hold the data back; persisting here, on this
      // serial delegate queue, holds back every data callback instead.
      accept(learned)
      state.withLock { $0.writing = true }
      completionHandler(.allow)
    case .end(let outcome):
      finish(outcome)
      completionHandler(.cancel)
    }
  }

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    // One lock per chunk: this runs for every 16 KiB and must keep up with the network.
    let writing = state.withLock { state -> Bool in
      state.lastByte = .now
      guard state.writing, state.outcome == nil else { return false }
      state.learned.bodyReceived += Int64(data.count)
      return true
    }
    guard writing else { return }
    do {
      try file.append(data)
    } catch {
      finish(.failed(error))
      cancel(dataTask)
    }
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask,
    willPerformHTTPRedirection response: HTTPURLResponse,
    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
  ) {
    if let refusal = HTTPExchange.refusal(ofRedirectTo: request) {
      // Not followed: the redirect's own response ends the exchange, with this outcome.
      finish(.failed(refusal))
      completionHandler(nil)
      return
    }
    let next = HTTPExchange.redirect(task, to: request, keeping: rangeHeaders)
    if let url = next.url {
      state.withLock { $0.learned.url = url }
      emit(.redirected(url))
    }
    completionHandler(next)
  }

  func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
    let learned = learned
    if let error {
      finish(.failed(DownloadError(.network, error.localizedDescription)))
    } else if let expected = learned.bodyExpected, learned.bodyReceived != expected {
      finish(
        .failed(
          DownloadError(
            .network,
            "the connection ended after \(learned.bodyReceived) of \(expected) body bytes")))
    } else {
      finish(.complete)
    }
    let (continuation, outcome) = state.withLock { state in
      defer { state.continuation = nil }
      return (state.continuation, state.outcome ?? .complete)
    }
    continuation?.resume(returning: outcome)
  }

  // MARK: Deciding

  private enum Action {
    /// Write the body (after truncating the file, for this reason, when there is one).
    case write(restart: String?)
    /// Do not touch the file; end the exchange.
    case end(Outcome)
  }

  /// What to do with a response, and the complete length it tells.
  private func judge(_ response: HTTPURLResponse) -> (action: Action, total: Int64?) {
    let status = response.statusCode
    let encoding = HTTPExchange.header(response, "Content-Encoding")?.lowercased()
    let encoded = encoding != nil && encoding != "identity"
    switch status {
    case 206:
      guard let value = HTTPExchange.header(response, "Content-Range"),
        let contentRange = HTTPRange.parseContentRange(value), let range = contentRange.range
      else {
        return (.end(.restart("the 206 response has no usable Content-Range")), nil)
      }
      if encoded {
        return (.end(.restart("the 206 response is \(encoding ?? "") encoded")), nil)
      }
      guard range.lowerBound == expectation.offset else {
        return (
          .end(
            .restart(
              "the server sent bytes from \(range.lowerBound), not from \(expectation.offset)")),
          nil
        )
      }
      if let known = expectation.knownTotal, let total = contentRange.total, total != known {
        return (
          .end(.restart("the file is now \(total) bytes long, not \(known)")), contentRange.total
        )
      }
      return (.write(restart: nil), contentRange.total)
    case 200:
      let total = HTTPExchange.header(response, "Content-Length").flatMap { Int64($0) }
      guard expectation.offset > 0 else { return (.write(restart: nil), encoded ? nil : total) }
      // A new version of the file carries a validator; a page without one (a portal, a proxy's
      // error) is not taken for the file, and the partial file stays as it is.
      guard
        HTTPExchange.header(response, "ETag") != nil
          || HTTPExchange.header(response, "Last-Modified") != nil
      else {
        return (
          .end(
            .failed(
              DownloadError(
                .badPartialResponse,
                "the server answered 200 without an ETag or Last-Modified: not taken for the file"))
          ),
          nil
        )
      }
      let reason =
        expectation.sentRange
        ? "the server sent the whole file (200) instead of the rest: it changed, or ignores ranges"
        : "the download starts over"
      return (.write(restart: reason), encoded ? nil : total)
    case 416:
      let total = HTTPExchange.header(response, "Content-Range").flatMap(
        HTTPRange.parseContentRange)?.total
      if let total, total == expectation.offset, expectation.offset > 0 {
        return (.end(.alreadyComplete), total)
      }
      return (.end(.restart("the server cannot satisfy the range (416)")), total)
    default:
      return (
        .end(
          .failed(
            DownloadError(
              .httpStatus,
              "the server answered \(status) \(HTTPURLResponse.localizedString(forStatusCode: status))",
              status: status))),
        nil
      )
    }
  }

  /// Records how the exchange ends; the first decision wins. The caller is resumed only from
  /// `didCompleteWithError`, which URLSession always sends last (after a cancel too).
  private func finish(_ outcome: Outcome) {
    state.withLock { state in
      if state.outcome == nil { state.outcome = outcome }
    }
  }
}

import Foundation
import Synchronization

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
  private let state = Mutex(State())
  // The Range and If-Range sent, carried over every redirect.
  private let rangeHeaders: [(String, String)]

  init(
    file: PartialFile, expectation: Expectation, rangeHeaders: [(String, String)],
    emit: @escaping @Sendable (DownloadEvent) -> Void
  ) {
    self.file = file
    self.expectation = expectation
    self.rangeHeaders = rangeHeaders
    self.emit = emit
  }

  /// What the responses told so far.
  var learned: Learned { state.withLock { $0.learned } }

  /// When the last body byte arrived (or the request went out).
  var lastByte: ContinuousClock.Instant { state.withLock { $0.lastByte } }

  /// Sends the request and waits for the exchange to end.
  func run(_ request: URLRequest, configuration: URLSessionConfiguration) async -> Outcome {
    let queue = OperationQueue()
    queue.maxConcurrentOperationCount = 1
    let session = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
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
      if stopped { task.cancel() }
    }
    // The session holds its delegate until it is invalidated.
    session.invalidateAndCancel()
    return outcome
  }

  /// Ends the exchange with `outcome` (unless it already has one) by cancelling its task.
  func stop(_ outcome: Outcome) {
    let task = state.withLock { state -> URLSessionDataTask? in
      if state.outcome == nil { state.outcome = outcome }
      return state.task
    }
    task?.cancel()
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
    state.withLock { state in
      state.learned.status = http.statusCode
      if http.statusCode == 200 || http.statusCode == 206 {
        state.learned.entityTag = header(http, "ETag")
        state.learned.lastModified = header(http, "Last-Modified")
        state.learned.bodyExpected = header(http, "Content-Length").flatMap { Int64($0) }
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
      state.withLock { $0.writing = true }
      completionHandler(.allow)
    case .end(let outcome):
      finish(outcome)
      completionHandler(.cancel)
    }
  }

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    let writing = state.withLock { state -> Bool in
      state.lastByte = .now
      return state.writing && state.outcome == nil
    }
    guard writing else { return }
    do {
      try file.append(data)
      state.withLock { $0.learned.bodyReceived += Int64(data.count) }
    } catch {
      finish(.failed(error))
      dataTask.cancel()
    }
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask,
    willPerformHTTPRedirection response: HTTPURLResponse,
    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
  ) {
    var next = request
    let from = task.currentRequest?.url ?? task.originalRequest?.url
    if let from, let to = next.url, !Self.sameOrigin(from, to) {
      // Credentials are for the host they were given to.
      next.setValue(nil, forHTTPHeaderField: "Authorization")
      next.setValue(nil, forHTTPHeaderField: "Cookie")
    }
    for (name, value) in rangeHeaders { next.setValue(value, forHTTPHeaderField: name) }
    next.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
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
    let encoding = header(response, "Content-Encoding")?.lowercased()
    let encoded = encoding != nil && encoding != "identity"
    switch status {
    case 206:
      guard let value = header(response, "Content-Range"),
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
      let total = header(response, "Content-Length").flatMap { Int64($0) }
      guard expectation.offset > 0 else { return (.write(restart: nil), encoded ? nil : total) }
      let reason =
        expectation.sentRange
        ? "the server sent the whole file (200) instead of the rest: it changed, or ignores ranges"
        : "the download starts over"
      return (.write(restart: reason), encoded ? nil : total)
    case 416:
      let total = header(response, "Content-Range").flatMap(HTTPRange.parseContentRange)?.total
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

  private static func sameOrigin(_ lhs: URL, _ rhs: URL) -> Bool {
    lhs.scheme?.lowercased() == rhs.scheme?.lowercased()
      && lhs.host?.lowercased() == rhs.host?.lowercased() && lhs.port == rhs.port
  }
}

/// A response header, matched without regard to case.
private func header(_ response: HTTPURLResponse, _ name: String) -> String? {
  for (key, value) in response.allHeaderFields {
    if let key = key as? String, key.caseInsensitiveCompare(name) == .orderedSame {
      return value as? String
    }
  }
  return nil
}

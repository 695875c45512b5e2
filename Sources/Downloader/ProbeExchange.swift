import Foundation
import KeyedArchive
import PortableFoundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// One request of a probe (`Probe`): a GET on a URLSession of its own (so a connection of its
/// own), redirects followed and recorded, at most `bodyLimit` body bytes read, and the whole
/// exchange ended by the probe's deadline.
///
/// Not a download: nothing is written, and the body is cut off once it has given what the probe
/// needs (the head alone for most requests).
final class ProbeExchange: NSObject, URLSessionDataDelegate, @unchecked Sendable {
  /// What came back.
  struct Answer: Sendable {
    /// The status of the last response (after the redirects).
    var status: Int
    /// The URL that answered.
    var url: URL
    /// The response's header fields, names as the server spelled them, in no particular order.
    var headers: [(name: String, value: String)]
    /// The redirects followed, in order.
    var redirects: [ProbeRedirect]
    /// The body bytes read (at most the limit).
    var body: Data
  }

  private struct State {
    var answer: Answer?
    var redirects: [ProbeRedirect] = []
    var body = Data()
    var failure: ProbeError?
    var task: URLSessionDataTask?
    var done = false
  }

  private let request: URLRequest
  private let bodyLimit: Int
  private let maximumRedirects: Int
  private let state = Locked(State())
  // Signalled once, when the exchange ends.
  private let finished = DispatchSemaphore(value: 0)

  /// An exchange of `request` that reads at most `bodyLimit` body bytes and follows at most
  /// `maximumRedirects` redirects.
  init(_ request: URLRequest, bodyLimit: Int, maximumRedirects: Int) {
    self.request = request
    self.bodyLimit = max(bodyLimit, 0)
    self.maximumRedirects = maximumRedirects
  }

  /// Sends the request and waits for the answer, or for `deadline`, blocking the calling thread
  /// (never one of Swift concurrency's: a probe runs on a thread of its own, so that tests or an
  /// app keeping the cooperative pool busy do not eat into its time).
  func run(until deadline: ContinuousClock.Instant) -> Result<Answer, ProbeError> {
    let remaining = deadline - .now
    guard remaining > .zero else { return .failure(Self.timedOut(request)) }
    let seconds =
      Double(remaining.components.seconds) + Double(remaining.components.attoseconds) / 1e18
    var request = request
    request.timeoutInterval = max(seconds, 0.05)
    let configuration = URLSessionConfiguration.ephemeral
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    configuration.urlCache = nil
    configuration.httpCookieStorage = nil
    configuration.timeoutIntervalForRequest = max(seconds, 0.05)
    configuration.timeoutIntervalForResource = max(seconds, 0.05)
    let session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
    let task = session.dataTask(with: request)
    state.withLock { $0.task = task }
    task.resume()
    // URLSession's request timeout is an inactivity timer (a trickle outlasts it): the deadline is
    // enforced here as well.
    if finished.wait(timeout: .now() + .milliseconds(Int(seconds * 1000) + 1)) == .timedOut {
      end(failure: Self.timedOut(self.request), cancellingTask: true)
    }
    session.invalidateAndCancel()
    return state.withLock { state in
      if let answer = state.answer, state.failure == nil {
        var answer = answer
        answer.body = state.body
        answer.redirects = state.redirects
        return .success(answer)
      }
      return .failure(state.failure ?? ProbeError(.network, "the exchange ended without an answer"))
    }
  }

  private static func timedOut(_ request: URLRequest) -> ProbeError {
    ProbeError(
      .timedOut,
      "no complete answer from \(request.url?.host ?? "the server") before the probe's timeout")
  }

  /// Ends the exchange: with a failure unless an answer is already complete, and the waiter
  /// woken. Only a timeout cancels the task itself (from elsewhere): a task that completed, or
  /// that a `.cancel` disposition ends, must not be cancelled again, since FoundationNetworking on
  /// Linux traps when a cancel reaches a task it has already taken out of its registry. A body
  /// cut off at its limit is left to `invalidateAndCancel`, which cancels on the session's own
  /// queue, after the waiter returns.
  private func end(failure: ProbeError?, cancellingTask: Bool = false) {
    let (first, task) = state.withLock { state -> (Bool, URLSessionDataTask?) in
      guard !state.done else { return (false, nil) }
      state.done = true
      if let failure, state.failure == nil { state.failure = failure }
      return (true, state.task)
    }
    if cancellingTask, let task { URLSessionTransport.cancelElsewhere(task) }
    if first { finished.signal() }
  }

  // MARK: URLSessionDataDelegate

  func urlSession(
    _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
  ) {
    guard let http = response as? HTTPURLResponse else {
      end(failure: ProbeError(.network, "the response is not HTTP"))
      completionHandler(.cancel)
      return
    }
    var headers = [(name: String, value: String)]()
    for (key, value) in http.allHeaderFields {
      if let key = key as? String, let value = value as? String { headers.append((key, value)) }
    }
    headers.sort { $0.name.lowercased() < $1.name.lowercased() }
    state.withLock { state in
      state.answer = Answer(
        status: http.statusCode, url: http.url ?? request.url!, headers: headers, redirects: [],
        body: Data())
    }
    if bodyLimit == 0 {
      completionHandler(.cancel)
      end(failure: nil)
    } else {
      completionHandler(.allow)
    }
  }

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    let full = state.withLock { state -> Bool in
      guard !state.done else { return false }
      let room = bodyLimit - state.body.count
      state.body.append(data.prefix(max(room, 0)))
      return state.body.count >= bodyLimit
    }
    if full { end(failure: nil) }
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask,
    willPerformHTTPRedirection response: HTTPURLResponse,
    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
  ) {
    let from = task.currentRequest?.url ?? response.url ?? self.request.url!
    let hop = ProbeRedirect(
      status: response.statusCode, from: from.absoluteString,
      to: request.url?.absoluteString ?? "")
    let count = state.withLock { state -> Int in
      state.redirects.append(hop)
      return state.redirects.count
    }
    guard let to = request.url, ["http", "https"].contains(to.scheme?.lowercased() ?? "") else {
      completionHandler(nil)
      end(
        failure: ProbeError(
          .redirect,
          "\(from.absoluteString) redirects to \(request.url?.absoluteString ?? "no URL"), which is not an http or https URL"
        ))
      return
    }
    guard count <= maximumRedirects else {
      completionHandler(nil)
      end(failure: ProbeError(.redirect, "more than \(maximumRedirects) redirects"))
      return
    }
    // The fields sent are those of the probe's request (Foundation on Linux copies them all,
    // Apple's URLSession most); credentials stay with their origin, as a download drops them.
    var next = request
    for (name, value) in self.request.allHTTPHeaderFields ?? [:] {
      next.setValue(value, forHTTPHeaderField: name)
    }
    if !ProbeExchange.sameOrigin(from, to) {
      next.setValue(nil, forHTTPHeaderField: "Authorization")
      next.setValue(nil, forHTTPHeaderField: "Cookie")
    }
    completionHandler(next)
  }

  func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
    let answered = state.withLock { $0.answer != nil }
    if let error, !answered {
      // URLSession's own timer may fire before the probe's deadline does.
      let timedOut = (error as? URLError)?.code == .timedOut
      end(
        failure: timedOut
          ? Self.timedOut(request) : ProbeError(.network, error.localizedDescription))
    } else {
      end(failure: nil)
    }
  }

  /// Whether two URLs share scheme, host and port.
  static func sameOrigin(_ lhs: URL, _ rhs: URL) -> Bool {
    lhs.scheme?.lowercased() == rhs.scheme?.lowercased()
      && lhs.host?.lowercased() == rhs.host?.lowercased() && lhs.port == rhs.port
  }
}

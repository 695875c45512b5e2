import Foundation
import PortableFoundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif
#if canImport(Security)
  import Security
#endif

/// The URLSession transport: one session whose data tasks are the exchanges, its delegate calls
/// handed to their handlers on a bounded delegate queue (`DelegateQueue`: when the handlers fall
/// behind, URLSession's own thread waits, and with it libcurl and the server).
///
/// A task is never suspended and resumed (Foundation on Linux restarts it from byte 0 and
/// appends); ending one cancels it.
final class URLSessionTransport: NSObject, HTTPTransport, URLSessionDataDelegate,
  @unchecked Sendable
{
  private struct Exchange {
    var id: Int
    var handler: any ExchangeHandler
    var task: URLSessionDataTask
  }

  private let delegateQueue: DelegateQueue
  private let settings: TransportSettings
  // By task identifier.
  private let exchanges = Locked([Int: Exchange]())
  private var session: URLSession!

  init(_ settings: TransportSettings) {
    self.settings = settings
    delegateQueue = DelegateQueue(limit: settings.maximumQueuedChunks)
    super.init()
    let configuration = URLSessionConfiguration.ephemeral
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    configuration.urlCache = nil
    configuration.timeoutIntervalForRequest = settings.timeout
    configuration.httpMaximumConnectionsPerHost = max(settings.connections, 1)
    session = URLSession(
      configuration: configuration, delegate: self, delegateQueue: delegateQueue)
  }

  var peakBacklog: Int { delegateQueue.peakBacklog }

  func start(_ request: TransportRequest, id: Int, handler: any ExchangeHandler) {
    let task = session.dataTask(with: Self.urlRequest(request, timeout: settings.timeout))
    exchanges.withLock {
      $0[task.taskIdentifier] = Exchange(id: id, handler: handler, task: task)
    }
    task.resume()
  }

  func cancel(_ id: Int) {
    let task = exchanges.withLock { $0.values.first { $0.id == id }?.task }
    if let task { Self.cancelElsewhere(task) }
  }

  func cancelAll() {
    let tasks = exchanges.withLock { $0.values.map(\.task) }
    // Cancelling runs on URLSession's work queue, which may be waiting for room on the delegate
    // queue: that waiting stops first.
    delegateQueue.open()
    for task in tasks { Self.cancelElsewhere(task) }
  }

  func close() {
    delegateQueue.open()
    // The session holds its delegate until it is invalidated.
    session.invalidateAndCancel()
  }

  private func exchange(_ task: URLSessionTask) -> Exchange? {
    exchanges.withLock { $0[task.taskIdentifier] }
  }

  // MARK: URLSessionDataDelegate

  func urlSession(
    _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
  ) {
    guard let exchange = exchange(dataTask), let http = response as? HTTPURLResponse else {
      completionHandler(.cancel)
      return
    }
    let head = Self.head(http, url: http.url ?? dataTask.currentRequest?.url)
    completionHandler(exchange.handler.exchange(exchange.id, didReceive: head) ? .allow : .cancel)
  }

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    guard let exchange = exchange(dataTask) else { return }
    let goOn = data.withUnsafeBytes { exchange.handler.exchange(exchange.id, didReceive: $0) }
    if !goOn { Self.cancelElsewhere(dataTask) }
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask,
    willPerformHTTPRedirection response: HTTPURLResponse,
    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
  ) {
    guard let exchange = exchange(task), let to = request.url,
      let from = task.currentRequest ?? task.originalRequest, let fromURL = from.url
    else {
      completionHandler(nil)
      return
    }
    let current = TransportRequest(url: fromURL, headers: Self.fields(of: from))
    let next = exchange.handler.exchange(
      exchange.id, willRedirectFrom: current, response: Self.head(response, url: fromURL),
      to: TransportRequest(url: to, headers: Self.fields(of: request)))
    completionHandler(next.map { Self.urlRequest($0, timeout: request.timeoutInterval) })
  }

  func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
    guard let exchange = exchanges.withLock({ $0.removeValue(forKey: task.taskIdentifier) })
    else { return }
    let failure = error.map { error -> TransportError in
      let code = (error as? URLError)?.code
      // FoundationNetworking on Linux reports libcurl's certificate failures as
      // NSURLErrorUnknown; Apple's URLSession names them.
      let untrusted: Set<URLError.Code> = [
        .serverCertificateUntrusted, .serverCertificateHasBadDate,
        .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid,
      ]
      return TransportError(
        message: error.localizedDescription, cancelled: code == .cancelled,
        untrusted: code.map { untrusted.contains($0) } ?? false)
    }
    exchange.handler.exchange(exchange.id, didCompleteWith: failure)
  }

  #if canImport(Security)
    // Apple platforms: a server whose chain ends at the configured authority is trusted (the
    // system's anchors are not consulted then, as curl's --cacert). Not built or run here.
    func urlSession(
      _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
      completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
      guard let authority = settings.certificateAuthority,
        challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust,
        let trust = challenge.protectionSpace.serverTrust
      else {
        completionHandler(.performDefaultHandling, nil)
        return
      }
      let anchors = CertificateAuthority.certificates(in: authority)
      guard !anchors.isEmpty else {
        completionHandler(.cancelAuthenticationChallenge, nil)
        return
      }
      SecTrustSetAnchorCertificates(trust, anchors as CFArray)
      SecTrustSetAnchorCertificatesOnly(trust, true)
      if SecTrustEvaluateWithError(trust, nil) {
        completionHandler(.useCredential, URLCredential(trust: trust))
      } else {
        completionHandler(.cancelAuthenticationChallenge, nil)
      }
    }
  #endif

  // MARK: Conversions

  private static func urlRequest(_ request: TransportRequest, timeout: TimeInterval) -> URLRequest {
    var urlRequest = URLRequest(url: request.url)
    urlRequest.httpMethod = "GET"
    urlRequest.timeoutInterval = timeout
    for (name, value) in request.headers { urlRequest.addValue(value, forHTTPHeaderField: name) }
    return urlRequest
  }

  private static func fields(of request: URLRequest) -> [(name: String, value: String)] {
    (request.allHTTPHeaderFields ?? [:]).sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
  }

  private static func head(_ response: HTTPURLResponse, url: URL?) -> TransportResponse {
    var headers = [(name: String, value: String)]()
    for (key, value) in response.allHeaderFields {
      if let key = key as? String, let value = value as? String { headers.append((key, value)) }
    }
    return TransportResponse(
      status: response.statusCode, headers: headers,
      url: url ?? response.url ?? URL(fileURLWithPath: "/"), httpVersion: nil)
  }

  /// Cancels a task from another thread: cancelling runs synchronously on URLSession's work
  /// queue, which may be this very thread (delegate calls run on it) or may be waiting for room on
  /// a delegate queue that the caller has just opened.
  static func cancelElsewhere(_ task: URLSessionTask) {
    let task = UncheckedTask(task: task)
    DispatchQueue.global().async { task.task.cancel() }
  }
}

/// A task handed to another thread to be cancelled (URLSessionTask is thread-safe, but not marked
/// Sendable on Linux).
private struct UncheckedTask: @unchecked Sendable {
  let task: URLSessionTask
}

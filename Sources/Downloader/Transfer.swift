import Foundation
import PortableFoundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// One HTTP exchange of a download, over whichever transport: its handler decides, from the
/// response, whether the body continues the partial file, replaces it, completes it or must not
/// touch it, and then writes each piece as it arrives (so memory stays bounded).
final class Transfer: ExchangeHandler, @unchecked Sendable {
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
    /// The server answered 416 without naming the file's length (Apache, lighttpd): ask for it
    /// (`Expectation.lengthCheck`) before fetching anything again.
    case askLength
  }

  /// What the request asked for, to judge the response against.
  struct Expectation: Sendable {
    /// Bytes on disk when the request went out.
    var offset: Int64
    /// Whether a Range header was sent.
    var sentRange: Bool
    /// The complete length, when an earlier response told it.
    var knownTotal: Int64?
    /// The request asks for `bytes=0-0` with `If-Range`, only to learn the file's length after a
    /// 416 that did not say it: a 206 naming the partial file's length completes it, a 200 (the
    /// file changed) is the new file.
    var lengthCheck = false
    /// The strong ETag sent as `If-Range`, when one was.
    var ifRangeTag: String? = nil
    /// The Last-Modified date sent as `If-Range`, when no ETag was.
    var ifRangeDate: String? = nil
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
    // How the exchange ended, once it has (before anyone waits for it, when it was adopted).
    var ended: Outcome?
    var learned = Learned()
    var writing = false
    var lastByte = ContinuousClock.now
    var transport: (any HTTPTransport)?
  }

  private let file: PartialFile
  private let expectation: Expectation
  private let emit: @Sendable (DownloadEvent) -> Void
  // Told what the response says before its body is let in (the download persists it first);
  // runs on the transport's thread (URLSession's delegate queue, or libcurl's thread).
  private let accept: @Sendable (Learned) -> Void
  private let state = Locked(State())
  // The Range and If-Range sent, carried over every redirect.
  private let rangeHeaders: [(String, String)]

  init(
    file: PartialFile, expectation: Expectation, rangeHeaders: [(String, String)],
    emit: @escaping @Sendable (DownloadEvent) -> Void,
    accept: @escaping @Sendable (Learned) -> Void
  ) {
    self.file = file
    self.expectation = expectation
    self.rangeHeaders = rangeHeaders
    self.emit = emit
    self.accept = accept
  }

  /// What the responses told so far.
  var learned: Learned { state.withLock { $0.learned } }

  /// When the last body byte arrived (or the request went out).
  var lastByte: ContinuousClock.Instant { state.withLock { $0.lastByte } }

  /// Sends the request over `transport` and waits for the exchange to end.
  func run(_ request: TransportRequest, over transport: any HTTPTransport) async -> Outcome {
    let stopped = state.withLock { state -> Bool in
      state.transport = transport
      state.learned.url = request.url
      state.lastByte = .now
      return state.outcome != nil
    }
    transport.start(request, id: 0, handler: self)
    // A stop that came before the exchange existed ends it now.
    if stopped { transport.cancelAll() }
    return await outcome()
  }

  /// Takes over an exchange already under way on `transport` (a segmented run's probe answered
  /// with the whole file): its response and body come here from now on; `outcome()` waits for its
  /// end.
  func adopt(on transport: any HTTPTransport) {
    state.withLock { state in
      state.transport = transport
      state.lastByte = .now
    }
  }

  /// Waits for the exchange to end (it may have already).
  func outcome() async -> Outcome {
    await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
      let ended = state.withLock { state -> Outcome? in
        if state.ended == nil { state.continuation = continuation }
        return state.ended
      }
      if let ended { continuation.resume(returning: ended) }
    }
  }

  /// Ends the exchange with `outcome` (unless it already has one).
  func stop(_ outcome: Outcome) {
    let transport = state.withLock { state -> (any HTTPTransport)? in
      if state.outcome == nil { state.outcome = outcome }
      return state.transport
    }
    transport?.cancelAll()
  }

  // MARK: ExchangeHandler

  func exchange(_ id: Int, didReceive http: TransportResponse) -> Bool {
    let decision = judge(http)
    let encoding = http.header("Content-Encoding")?.lowercased()
    // libcurl decodes an encoded body, so its Content-Length is not the number of bytes written.
    let plain = encoding == nil || encoding == "identity"
    state.withLock { state in
      state.learned.status = http.status
      // Only a body that goes into the file says what the file is.
      if case .write = decision.action {
        state.learned.wrote = true
        state.learned.entityTag = http.header("ETag")
        state.learned.lastModified = http.header("Last-Modified")
        state.learned.bodyExpected =
          plain ? http.header("Content-Length").flatMap { Int64($0) } : nil
      }
      if let total = decision.total { state.learned.total = total }
      state.learned.url = http.url
    }
    switch decision.action {
    case .write(let restartReason):
      if let restartReason {
        do {
          try file.truncate()
        } catch {
          finish(.failed(error))
          return false
        }
        state.withLock { $0.learned.restartReason = restartReason }
        emit(.restarted(reason: restartReason))
      }
      // The body is let in only once the download has recorded the validators it belongs to, so
      // that a process killed at any later instant leaves resume data that can continue it.
      // Both transports hold every piece of body back until this returns (FoundationNetworking
      // delivers body data before a completion handler would be called, so persisting runs here,
      // on the serial delegate queue, or on libcurl's thread).
      accept(learned)
      state.withLock { $0.writing = true }
      return true
    case .end(let outcome):
      finish(outcome)
      return false
    }
  }

  func exchange(_ id: Int, didReceive bytes: UnsafeRawBufferPointer) -> Bool {
    // One lock per piece: this runs for every chunk and must keep up with the network.
    let writing = state.withLock { state -> Bool in
      state.lastByte = .now
      guard state.writing, state.outcome == nil else { return false }
      state.learned.bodyReceived += Int64(bytes.count)
      return true
    }
    guard writing else { return false }
    do {
      try file.append(bytes)
      return true
    } catch {
      finish(.failed(error))
      return false
    }
  }

  func exchange(
    _ id: Int, willRedirectFrom current: TransportRequest, response: TransportResponse,
    to next: TransportRequest
  ) -> TransportRequest? {
    if let refusal = HTTPExchange.refusal(ofRedirectTo: next.url) {
      // Not followed: the redirect's own response ends the exchange, with this outcome.
      finish(.failed(refusal))
      return nil
    }
    let request = HTTPExchange.redirect(from: current, to: next, keeping: rangeHeaders)
    state.withLock { $0.learned.url = request.url }
    emit(.redirected(request.url))
    return request
  }

  func exchange(_ id: Int, didCompleteWith error: TransportError?) {
    let learned = learned
    if let error {
      finish(.failed(error.downloadError))
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
      state.ended = state.outcome ?? .complete
      return (state.continuation, state.ended ?? .complete)
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
  private func judge(_ response: TransportResponse) -> (action: Action, total: Int64?) {
    let status = response.status
    let encoding = response.header("Content-Encoding")?.lowercased()
    let encoded = encoding != nil && encoding != "identity"
    if expectation.lengthCheck, status == 206 {
      return judgeLength(response)
    }
    switch status {
    case 206:
      guard let value = response.header("Content-Range"),
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
      if let changed = changedValidator(response) {
        return (.end(.restart(changed)), nil)
      }
      return (.write(restart: nil), contentRange.total)
    case 200:
      let total = response.header("Content-Length").flatMap { Int64($0) }
      guard expectation.offset > 0 else { return (.write(restart: nil), encoded ? nil : total) }
      // A new version of the file carries a validator; a page without one (a portal, a proxy's
      // error) is not taken for the file, and the partial file stays as it is.
      guard
        response.header("ETag") != nil
          || response.header("Last-Modified") != nil
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
        expectation.lengthCheck
        ? "the file changed: the server sent it whole (200) when asked for its length"
        : expectation.sentRange
          ? "the server sent the whole file (200) instead of the rest: it changed, or ignores ranges"
          : "the download starts over"
      return (.write(restart: reason), encoded ? nil : total)
    case 416:
      let total = response.header("Content-Range").flatMap(
        HTTPRange.parseContentRange)?.total
      if let total, total == expectation.offset, expectation.offset > 0 {
        return (.end(.alreadyComplete), total)
      }
      if total == nil, expectation.offset > 0, !expectation.lengthCheck {
        return (.end(.askLength), nil)
      }
      return (.end(.restart("the server cannot satisfy the range (416)")), total)
    default:
      return (
        .end(
          .failed(
            DownloadError(
              .httpStatus,
              "the server answered \(status) \(HTTPExchange.reason(status))", status: status))),
        nil
      )
    }
  }

  /// What the answer to a length check (`bytes=0-0`, `If-Range`) means: the partial file is
  /// complete when the 206 names its length; any other length, a file that cannot be continued.
  private func judgeLength(_ response: TransportResponse) -> (action: Action, total: Int64?) {
    let total = response.header("Content-Range").flatMap(HTTPRange.parseContentRange)?.total
    guard let total else {
      return (.end(.restart("the server names no length for the file (416, then no length)")), nil)
    }
    if let changed = changedValidator(response) { return (.end(.restart(changed)), nil) }
    if total == expectation.offset { return (.end(.alreadyComplete), total) }
    return (
      .end(
        .restart(
          "the server cannot satisfy bytes=\(expectation.offset)- (416) of a file of \(total) bytes"
        )), nil
    )
  }

  /// Why a 206 is not the rest of the partial file, when it carries a validator other than the
  /// one sent as `If-Range`: a server that ignores If-Range answers a changed file with its new
  /// bytes, and appending them would splice two versions. A 206 without the validator passes (a
  /// server need not repeat it).
  private func changedValidator(_ response: TransportResponse) -> String? {
    if let sent = expectation.ifRangeTag, let tag = response.header("ETag"), tag != sent {
      return
        "the 206 response carries ETag \(tag), not \(sent): the file changed and the server ignored If-Range"
    }
    if let sent = expectation.ifRangeDate, let date = response.header("Last-Modified"),
      date != sent
    {
      return
        "the 206 response carries Last-Modified \(date), not \(sent): the file changed and the server ignored If-Range"
    }
    return nil
  }

  /// Records how the exchange ends; the first decision wins. The caller is resumed only from the
  /// exchange's end, which a transport always reports last (after a cancel too).
  private func finish(_ outcome: Outcome) {
    state.withLock { state in
      if state.outcome == nil { state.outcome = outcome }
    }
  }
}

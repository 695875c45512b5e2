import Foundation
import PortableFoundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The connections of a segmented run: one transport whose exchanges each fetch one segment
/// (`Range: bytes=S-E`, `If-Range`) and write it at its offset.
///
/// Every response is held to what was asked: a 206 for exactly that range of the same total, not
/// encoded, with the same validator. Anything else that says the file may have changed (a 200, a
/// 416, another range or total, another validator) stops the whole run, which then starts over:
/// no file is ever assembled from two versions of the resource. The first request of a new run
/// (the probe) asks for everything from the prefix already on disk (`bytes=R-`); only a 206 with a
/// known total and a strong validator lets the run go on in segments.
final class SegmentFetcher: ExchangeHandler, @unchecked Sendable {
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
  }

  private struct State {
    var exchanges: [Int: Exchange] = [:]
    // Probes whose answer (the whole file) a transfer took over: the rest of their calls go there.
    var adopted: [Int: Transfer] = [:]
    var url: URL?
    var stopped = false
    var nextID = 0
  }

  private let book: SegmentBook
  private let file: SegmentFile
  private let baseRequest: TransportRequest
  // The If-Range of a probe that continues a prefix already on disk (nil from byte 0).
  private let probeValidator: String?
  private let transport: any HTTPTransport
  private let state = Locked(State())
  // Runs on the transport's thread when the probe's answer allows segments, before its body is
  // let in: the download sets up the schedule, persists the map and allocates the file. An error
  // (it could not) fails the probe.
  private let onProbe: @Sendable (ProbeAnswer) -> DownloadError?
  private let emit: @Sendable (DownloadEvent) -> Void
  // Makes the transfer that keeps a probe's 200 as the file (nil: it could not, and the probe
  // falls back as before).
  private let adopt: @Sendable (Int64) -> Transfer?

  /// A fetcher of segments of `request` (its Range and If-Range are set for each fetch) over
  /// `transport`, which it closes.
  init(
    book: SegmentBook, file: SegmentFile, request: TransportRequest, probeValidator: String?,
    transport: any HTTPTransport, adopt: @escaping @Sendable (Int64) -> Transfer?,
    emit: @escaping @Sendable (DownloadEvent) -> Void,
    onProbe: @escaping @Sendable (ProbeAnswer) -> DownloadError?
  ) {
    self.adopt = adopt
    self.book = book
    self.file = file
    baseRequest = request
    self.probeValidator = probeValidator
    self.transport = transport
    self.emit = emit
    self.onProbe = onProbe
  }

  /// The URL the segments are fetched from (the request's, or where a redirect led).
  var url: URL? { state.withLock { $0.url ?? baseRequest.url } }

  /// The most pieces of body the transport held for this fetcher at once.
  var peakBacklog: Int { transport.peakBacklog }

  /// Ends every fetch (they return `.stopped` unless they already ended) and the transport.
  func close() {
    cancelAll()
    transport.close()
  }

  /// Stops every fetch in flight: each returns `.stopped` unless it already has an outcome. An
  /// adopted probe's exchange goes on (its transfer is the download's now).
  func cancelAll() {
    let (ids, adopted) = state.withLock { state -> ([Int], Bool) in
      state.stopped = true
      for (id, exchange) in state.exchanges where exchange.outcome == nil {
        state.exchanges[id]?.outcome = .stopped
      }
      return (Array(state.exchanges.keys), !state.adopted.isEmpty)
    }
    if adopted {
      for id in ids { transport.cancel(id) }
    } else {
      transport.cancelAll()
    }
  }

  /// Fails every fetch that has had no byte for `timeout` (they are retried).
  func failStalled(after timeout: Duration) {
    let now = ContinuousClock.now
    let stalled = state.withLock { state -> [Int] in
      var ids = [Int]()
      for (id, exchange) in state.exchanges where now - exchange.lastByte > timeout {
        guard exchange.outcome == nil else { continue }
        state.exchanges[id]?.outcome = .failed(
          DownloadError(.stalled, "no byte arrived for \(timeout.components.seconds) s"))
        ids.append(id)
      }
      return ids
    }
    for id in stalled { transport.cancel(id) }
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
    for (name, value) in headers { request.setHeader(name, value) }
    return await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
      let id = state.withLock { state -> Int? in
        guard !state.stopped else { return nil }
        state.nextID += 1
        state.exchanges[state.nextID] = Exchange(
          worker: worker, start: start, range: range, continuation: continuation)
        return state.nextID
      }
      guard let id else {
        continuation.resume(returning: .stopped)
        return
      }
      transport.start(request, id: id, handler: self)
    }
  }

  // MARK: ExchangeHandler

  func exchange(_ id: Int, didReceive http: TransportResponse) -> Bool {
    guard let exchange = state.withLock({ $0.exchanges[id] }), exchange.outcome == nil else {
      return false
    }
    if exchange.range == nil, http.status == 200, let transfer = adopt(exchange.start) {
      // The whole file: kept as it streams, never fetched again. The probe's fetch ends now
      // (its worker hands over to one connection); the exchange is the transfer's.
      let continuation = state.withLock { state in
        state.adopted[id] = transfer
        return state.exchanges.removeValue(forKey: id)?.continuation
      }
      continuation?.resume(
        returning: .fallback(
          "the server does not serve byte ranges (it answered 200 to bytes=\(exchange.start)-): "
            + "its answer is kept"))
      return transfer.exchange(id, didReceive: http)
    }
    let decision =
      exchange.range.map { judge(http, asked: $0) } ?? judgeProbe(http, from: exchange.start)
    if let decision {
      end(id, decision)
      return false
    }
    state.withLock { $0.exchanges[id]?.writing = true }
    return true
  }

  func exchange(_ id: Int, didReceive bytes: UnsafeRawBufferPointer) -> Bool {
    let (exchange, adopted) = state.withLock { state -> (Exchange?, Transfer?) in
      state.exchanges[id]?.lastByte = .now
      return (state.exchanges[id], state.adopted[id])
    }
    if let adopted { return adopted.exchange(id, didReceive: bytes) }
    guard let exchange, exchange.writing, exchange.outcome == nil else { return false }
    let claim = book.claim(exchange.start, worker: exchange.worker, count: bytes.count)
    var complete = false
    if claim.count == 0 {
      complete = book.isDone(exchange.start)
    } else {
      do throws(DownloadError) {
        try file.write(UnsafeRawBufferPointer(rebasing: bytes[0..<claim.count]), at: claim.offset)
      } catch {
        book.stop(.failed(error))
        end(id, .failed(error))
        return false
      }
      complete = book.commit(exchange.start, through: claim.offset + Int64(claim.count))
    }
    // The rest belongs to the next segment (its end moved when another connection took it over),
    // or the run is stopping: this connection's part is over.
    if complete || claim.count < bytes.count {
      end(id, complete ? .done : .stopped)
      return false
    }
    return true
  }

  func exchange(
    _ id: Int, willRedirectFrom current: TransportRequest, response: TransportResponse,
    to next: TransportRequest
  ) -> TransportRequest? {
    if let refusal = HTTPExchange.refusal(ofRedirectTo: next.url) {
      end(id, .failed(refusal))
      return nil
    }
    let rangeHeaders = ["Range", "If-Range"].compactMap { name in
      current.header(name).map { (name, $0) }
    }
    let request = HTTPExchange.redirect(from: current, to: next, keeping: rangeHeaders)
    let probe = state.withLock { state -> Bool in
      let probe = state.exchanges[id]?.range == nil
      if probe { state.url = request.url }
      return probe
    }
    if probe { emit(.redirected(request.url)) }
    return request
  }

  func exchange(_ id: Int, didCompleteWith error: TransportError?) {
    if let adopted = state.withLock({ $0.adopted.removeValue(forKey: id) }) {
      adopted.exchange(id, didCompleteWith: error)
      return
    }
    guard let exchange = state.withLock({ $0.exchanges.removeValue(forKey: id) }) else { return }
    var outcome = exchange.outcome
    if outcome == nil {
      if let error {
        outcome = .failed(error.downloadError)
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
  private func judge(_ response: TransportResponse, asked: ClosedRange<Int64>) -> Outcome? {
    let asking = "bytes \(asked.lowerBound)-\(asked.upperBound)"
    let status = response.status
    guard let identity = book.identity else {
      return .failed(DownloadError(.network, "a segment was fetched before the file was known"))
    }
    switch status {
    case 206:
      if let encoding = encoding(response) {
        return .restart("the 206 response for \(asking) is \(encoding) encoded")
      }
      let value = response.header("Content-Range") ?? ""
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
  private func judgeProbe(_ response: TransportResponse, from start: Int64) -> Outcome? {
    let status = response.status
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
    guard let value = response.header("Content-Range"),
      let contentRange = HTTPRange.parseContentRange(value), let range = contentRange.range,
      let total = contentRange.total, range.lowerBound == start, range.upperBound == total - 1
    else {
      return .fallback("the server's 206 does not continue bytes=\(start)- with a known length")
    }
    let tag = response.header("ETag").flatMap { $0.hasPrefix("W/") ? nil : $0 }
    let lastModified = response.header("Last-Modified")
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
    _ response: TransportResponse, _ identity: SegmentBook.Identity
  ) -> String? {
    if let tag = identity.entityTag {
      let sent = response.header("ETag")
      return sent == tag ? nil : "carries ETag \(sent ?? "none"), not \(tag)"
    }
    if let date = identity.lastModified,
      let sent = response.header("Last-Modified"), sent != date
    {
      return "carries Last-Modified \(sent), not \(date)"
    }
    return nil
  }

  private func hasValidator(_ response: TransportResponse) -> Bool {
    response.header("ETag") != nil
      || response.header("Last-Modified") != nil
  }

  /// The response's content coding, when it is not the identity.
  private func encoding(_ response: TransportResponse) -> String? {
    let encoding = response.header("Content-Encoding")?.lowercased()
    return encoding == nil || encoding == "identity" ? nil : encoding
  }

  private static func statusError(_ status: Int) -> DownloadError {
    DownloadError(
      .httpStatus,
      "the server answered \(status) \(HTTPExchange.reason(status))",
      status: status)
  }

  private func describe(_ exchange: Exchange) -> String {
    exchange.range.map { "\($0.lowerBound)-\($0.upperBound)" } ?? "\(exchange.start)-"
  }

  /// Records how a fetch ends; the first decision wins. The fetch returns from the exchange's
  /// end, which a transport always reports last (after a cancel too).
  private func end(_ id: Int, _ outcome: Outcome) {
    state.withLock { state in
      if state.exchanges[id]?.outcome == nil { state.exchanges[id]?.outcome = outcome }
    }
  }
}

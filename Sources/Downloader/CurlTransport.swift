#if canImport(CCurlShim) && os(Linux)
  import CCurlShim
  import Foundation
  import KeyedArchive
  import PortableFoundation

  /// The libcurl transport (Linux): one multi handle driven by one thread of its own that sleeps
  /// in `curl_multi_poll` until a socket has data, a libcurl timer is due or the thread is woken
  /// (a new exchange, a cancel, the end), and in between hands each piece of body to its handler
  /// as libcurl reads it, from libcurl's own buffer. Every exchange of a run (all the
  /// connections of a segmented download) shares the thread and the multi handle.
  ///
  /// Redirects are followed here, not by libcurl, so that the handler decides each one as it does
  /// under URLSession (and drops credentials across hosts). HTTP/2 streams are not multiplexed:
  /// every exchange has a connection of its own, which is what segments are for (a server's
  /// per-connection rate). Backpressure needs nothing: a handler that waits (for the disk) holds
  /// the thread, libcurl reads nothing meanwhile, and TCP holds the server back.
  final class CurlTransport: HTTPTransport, @unchecked Sendable {
    /// Redirects followed in one exchange at most: as FoundationNetworking's URLSession, whose
    /// words the failure takes too ("too many HTTP redirects").
    static let maximumRedirects = 20
    /// Bytes libcurl reads at once: each piece handed to a handler is at most this.
    static let bufferSize = 256 * 1024

    private struct Pending {
      var starts: [Exchange] = []
      var cancels: [Int] = []
      var cancelAll = false
      var closing = false
    }

    /// One exchange: the requests it made (one more for each redirect) and where its response is.
    /// Touched only on the loop's thread, after the start that hands it over.
    final class Exchange: @unchecked Sendable {
      let id: Int
      let handler: any ExchangeHandler
      var request: TransportRequest
      var transfer: OpaquePointer?
      var redirects = 0
      // The response being read: its status line and fields so far.
      var status: Int?
      var fields: [(name: String, value: String)] = []
      var delivered = false
      var redirectTo: URL?
      var refusedByHandler = false
      var responseURL: URL

      init(id: Int, handler: any ExchangeHandler, request: TransportRequest) {
        self.id = id
        self.handler = handler
        self.request = request
        responseURL = request.url
      }

      /// The response head read so far.
      func head() -> TransportResponse {
        let version = transfer.map { Int(rd_curl_transfer_http_version($0)) }
        return TransportResponse(
          status: status ?? 0, headers: fields, url: responseURL,
          httpVersion: version == 0 ? nil : version)
      }

      /// Hands the response head to the handler; false when it refuses the body.
      func deliver() -> Bool {
        delivered = true
        let accepted = handler.exchange(id, didReceive: head())
        if !accepted { refusedByHandler = true }
        return accepted
      }

      /// A header line (inside `rd_curl_loop_perform`): a status line starts a response (a
      /// 1xx's is replaced by the next), fields accumulate, and the blank line ends the head: a
      /// redirect is noted, anything else is handed to the handler before its body.
      func headerLine(_ line: UnsafeRawBufferPointer) -> Bool {
        // The line ends in CRLF (a single Character in Swift): cut it off as bytes.
        var count = line.count
        while count > 0, line[count - 1] == 0x0D || line[count - 1] == 0x0A { count -= 1 }
        let text = Substring(String(decoding: line.prefix(count), as: UTF8.self))
        if text.hasPrefix("HTTP/") {
          let parts = text.split(separator: " ", maxSplits: 2)
          status = parts.count > 1 ? Int(parts[1]) : nil
          fields = []
          redirectTo = nil
          return true
        }
        // Trailers of a chunked body, after the head was handed over.
        guard !delivered else { return true }
        if text.isEmpty {
          guard let status, !(100..<200).contains(status) else { return true }
          if [301, 302, 303, 307, 308].contains(status),
            let location = fields.first(where: { HTTPFieldName.equal($0.name, "Location") })?.value,
            let target = URL(string: location, relativeTo: request.url)?.absoluteURL
          {
            redirectTo = target
            return true
          }
          return deliver()
        }
        if let first = text.first, first == " " || first == "\t", !fields.isEmpty {
          // An obsolete folded line continues the field before it.
          fields[fields.count - 1].value += " " + text.trimmingCharacters(in: .whitespaces)
          return true
        }
        guard let colon = text.firstIndex(of: ":") else { return true }
        fields.append(
          (
            String(text[..<colon]),
            text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
          ))
        return true
      }

      /// A piece of body: the handler's, once its head was accepted; a redirect's is dropped.
      func bodyPiece(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard delivered, redirectTo == nil else { return true }
        if handler.exchange(id, didReceive: bytes) { return true }
        refusedByHandler = true
        return false
      }
    }

    private let settings: TransportSettings
    private let loop: OpaquePointer?
    private let pending = Locked(Pending())
    private let finished = DispatchSemaphore(value: 0)
    // The loop thread's own.
    private var exchanges: [Int: Exchange] = [:]
    private var thread: Thread?

    init(_ settings: TransportSettings) {
      self.settings = settings
      _ = rd_curl_global_init()
      loop = rd_curl_loop_new(Int(max(settings.connections, 1)), 0)
      let thread = Thread { [self] in run() }
      thread.name = "resumedata.curl"
      self.thread = thread
      thread.start()
    }

    // libcurl hands each piece over and waits for the handler: nothing queues.
    var peakBacklog: Int { 1 }

    func start(_ request: TransportRequest, id: Int, handler: any ExchangeHandler) {
      let exchange = Exchange(id: id, handler: handler, request: request)
      pending.withLock { $0.starts.append(exchange) }
      wake()
    }

    func cancel(_ id: Int) {
      pending.withLock { $0.cancels.append(id) }
      wake()
    }

    func cancelAll() {
      pending.withLock { $0.cancelAll = true }
      wake()
    }

    func close() {
      let first = pending.withLock { pending -> Bool in
        defer { pending.closing = true }
        return !pending.closing
      }
      guard first else { return }
      wake()
      finished.wait()
      rd_curl_loop_free(loop)
    }

    private func wake() {
      if let loop { _ = rd_curl_loop_wake(loop) }
    }

    // MARK: The loop

    private func run() {
      guard let loop else {
        failEverything("libcurl could not make a multi handle")
        return
      }
      while true {
        let work = pending.withLock { pending -> Pending in
          defer {
            pending.starts = []
            pending.cancels = []
            pending.cancelAll = false
          }
          return pending
        }
        for exchange in work.starts { begin(exchange, loop) }
        if work.cancelAll || work.closing {
          for exchange in exchanges.values {
            end(exchange, loop, .init(message: "cancelled", cancelled: true))
          }
        } else {
          for id in work.cancels {
            if let exchange = exchanges[id] {
              end(exchange, loop, .init(message: "cancelled", cancelled: true))
            }
          }
        }
        if work.closing, exchanges.isEmpty { break }
        if !exchanges.isEmpty {
          _ = rd_curl_loop_perform(loop)
          var result: Int32 = 0
          while let transfer = rd_curl_loop_next_done(loop, &result) {
            guard let context = rd_curl_transfer_context(transfer) else { continue }
            let exchange = Unmanaged<Exchange>.fromOpaque(context).takeUnretainedValue()
            done(exchange, loop, result: result)
          }
        }
        // Until a socket is ready, libcurl's next timer, or a wake-up: never a busy wait.
        _ = rd_curl_loop_wait(loop, exchanges.isEmpty ? 10_000 : 1_000)
      }
      finished.signal()
    }

    /// Fails every exchange handed over (the loop could not be made) and lets `close` go on.
    private func failEverything(_ message: String) {
      while true {
        let work = pending.withLock { pending -> Pending in
          defer { pending.starts = [] }
          return pending
        }
        for exchange in work.starts {
          exchange.handler.exchange(exchange.id, didCompleteWith: TransportError(message: message))
        }
        if work.closing { break }
        Thread.sleep(forTimeInterval: 0.05)
      }
      finished.signal()
    }

    /// Sends an exchange's current request.
    private func begin(_ exchange: Exchange, _ loop: OpaquePointer) {
      exchange.status = nil
      exchange.fields = []
      exchange.delivered = false
      exchange.redirectTo = nil
      exchange.responseURL = exchange.request.url
      let lines = exchange.request.headers.map { "\($0.name): \($0.value)" }
      var failure = [CChar](repeating: 0, count: 256)
      let context = Unmanaged.passUnretained(exchange).toOpaque()
      let transfer = withCStrings(lines) { headers in
        exchange.request.url.absoluteString.withCString { url in
          withOptionalCString(settings.certificateAuthority?.path) { authority in
            var request = rd_curl_request(
              url: url, headers: headers.baseAddress, header_count: headers.count,
              connect_timeout_ms: Int(settings.timeout * 1000),
              idle_timeout_s: Int(settings.timeout.rounded(.up)),
              ca_file: authority, buffer_size: Self.bufferSize)
            return rd_curl_transfer_new(
              &request, context, curlHeaderLine, curlBodyPiece, &failure, failure.count)
          }
        }
      }
      guard let transfer else {
        exchanges[exchange.id] = nil
        exchange.handler.exchange(
          exchange.id,
          didCompleteWith: TransportError(
            message: failure.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }))
        return
      }
      exchange.transfer = transfer
      exchanges[exchange.id] = exchange
      if rd_curl_loop_add(loop, transfer) != 0 {
        end(exchange, loop, TransportError(message: "libcurl could not start the request"))
      }
    }

    /// Takes an exchange out of the loop and reports its end.
    private func end(_ exchange: Exchange, _ loop: OpaquePointer, _ error: TransportError?) {
      release(exchange, loop)
      exchanges[exchange.id] = nil
      exchange.handler.exchange(exchange.id, didCompleteWith: error)
    }

    private func release(_ exchange: Exchange, _ loop: OpaquePointer) {
      if let transfer = exchange.transfer {
        _ = rd_curl_loop_remove(loop, transfer)
        rd_curl_transfer_free(transfer)
        exchange.transfer = nil
      }
    }

    /// A request of the exchange ended, with libcurl's result code.
    private func done(_ exchange: Exchange, _ loop: OpaquePointer, result: Int32) {
      guard let transfer = exchange.transfer else { return }
      if result != 0 {
        let cancelled = exchange.refusedByHandler && result == rd_curl_result_aborted()
        let message = String(cString: rd_curl_transfer_error(transfer, result))
        end(
          exchange, loop,
          TransportError(
            message: message, cancelled: cancelled,
            untrusted: rd_curl_result_untrusted(result) != 0))
        return
      }
      if let target = exchange.redirectTo {
        follow(exchange, to: target, loop)
        return
      }
      if !exchange.delivered, !exchange.deliver() {
        end(exchange, loop, TransportError(message: "cancelled", cancelled: true))
        return
      }
      end(exchange, loop, nil)
    }

    /// Asks the handler about a redirect and sends what it answers, or ends the exchange.
    private func follow(_ exchange: Exchange, to target: URL, _ loop: OpaquePointer) {
      let response = exchange.head()
      release(exchange, loop)
      exchange.redirects += 1
      guard exchange.redirects <= Self.maximumRedirects else {
        end(
          exchange, loop,
          TransportError(message: "too many HTTP redirects"))
        return
      }
      // As URLSession on Linux does: the new request is the old one at the new URL.
      var next = exchange.request
      next.url = target
      guard
        let request = exchange.handler.exchange(
          exchange.id, willRedirectFrom: exchange.request, response: response, to: next)
      else {
        // Not followed: the redirect's own response ends the exchange.
        exchange.delivered = true
        _ = exchange.handler.exchange(exchange.id, didReceive: response)
        end(exchange, loop, nil)
        return
      }
      exchange.request = request
      begin(exchange, loop)
    }

  }

  private func curlHeaderLine(
    _ context: UnsafeMutableRawPointer?, _ bytes: UnsafePointer<CChar>?, _ count: Int
  ) -> Int {
    guard let context else { return 0 }
    let exchange = Unmanaged<CurlTransport.Exchange>.fromOpaque(context).takeUnretainedValue()
    return exchange.headerLine(UnsafeRawBufferPointer(start: bytes, count: count)) ? count : 0
  }

  private func curlBodyPiece(
    _ context: UnsafeMutableRawPointer?, _ bytes: UnsafePointer<CChar>?, _ count: Int
  ) -> Int {
    guard let context else { return 0 }
    let exchange = Unmanaged<CurlTransport.Exchange>.fromOpaque(context).takeUnretainedValue()
    return exchange.bodyPiece(UnsafeRawBufferPointer(start: bytes, count: count)) ? count : 0
  }

  /// Runs `body` with the strings as an array of C strings.
  private func withCStrings<R>(
    _ strings: [String], _ body: (UnsafeBufferPointer<UnsafePointer<CChar>?>) -> R
  ) -> R {
    let copies = strings.map { strdup($0) }
    defer { for copy in copies { free(copy) } }
    let pointers = copies.map { UnsafePointer($0) }
    return pointers.withUnsafeBufferPointer(body)
  }

  private func withOptionalCString<R>(_ string: String?, _ body: (UnsafePointer<CChar>?) -> R)
    -> R
  {
    guard let string else { return body(nil) }
    return string.withCString { body($0) }
  }
#endif

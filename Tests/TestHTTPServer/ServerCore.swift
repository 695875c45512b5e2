import Foundation
import Glibc
import Synchronization

/// A published resource.
struct Resource: Sendable {
  enum Content: Sendable {
    case data(Data)
    case file(String)
  }

  var content: Content
  var etag: String?
  var lastModified: String?
  var contentType: String
}

/// The server's state and threads, apart from the public object so that the threads, which hold
/// this, do not keep that object alive: dropping it stops the server.
final class ServerCore: Sendable {
  private struct State {
    var resources: [String: Resource] = [:]
    var faults: [String: [FaultStep]] = [:]
    var log: [RecordedRequest] = []
    var stopped = false
    var nextConnection = 0
    var serial = 0
    /// Sockets of connections whose thread has not finished; only that thread's exit closes
    /// one, under the lock, so `stop()` never shuts down a descriptor number already reused.
    var openSockets: [Int: Int32] = [:]
    /// Threads not yet joined.
    var threads: [Int: pthread_t] = [:]
    /// Connections whose thread has ended and can be joined without waiting.
    var finished: [Int] = []
  }

  let configuration: TestHTTPServer.Configuration
  let port: Int
  private let listener: Int32
  /// Written once by `stop()` and never read, so it stays readable: every `poll` that includes it
  /// (the accept loop, stalls, trickle pauses) wakes up at once.
  private let wakeReader: Int32
  private let wakeWriter: Int32
  private let state = Mutex(State())
  private let acceptThread = Mutex<pthread_t?>(nil)

  init(configuration: TestHTTPServer.Configuration) throws {
    self.configuration = configuration
    let (listener, port) = try Socket.makeLoopbackListener(backlog: 128)
    var pipeEnds: [Int32] = [0, 0]
    guard pipe(&pipeEnds) == 0 else {
      let code = errno
      close(listener)
      throw TestHTTPServerError(operation: "pipe", code: code)
    }
    for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
    self.listener = listener
    self.port = port
    wakeReader = pipeEnds[0]
    wakeWriter = pipeEnds[1]
    guard let thread = spawnThread({ [self] in acceptLoop() }) else {
      close(listener)
      close(pipeEnds[0])
      close(pipeEnds[1])
      throw TestHTTPServerError(operation: "pthread_create", code: EAGAIN)
    }
    acceptThread.withLock { $0 = thread }
  }

  // MARK: Resources, faults, log

  func publish(path: String, _ resource: Resource?) {
    state.withLock { $0.resources[path] = resource }
  }

  func setFaultSteps(path: String, _ steps: [FaultStep]) {
    state.withLock { $0.faults[path] = steps.isEmpty ? nil : steps }
  }

  func faultSteps(path: String) -> [FaultStep] {
    state.withLock { $0.faults[path] ?? [] }
  }

  /// The faults of this request to `path` (using up a step's count) and the resource there.
  func takeFaultsAndResource(path: String) -> (faults: [Fault], resource: Resource?) {
    state.withLock { state in
      let resource = state.resources[path]
      var steps = state.faults[path] ?? []
      while let first = steps.first, let count = first.requests, count <= 0 {
        steps.removeFirst()
      }
      guard var step = steps.first else {
        state.faults[path] = nil
        return ([], resource)
      }
      if let count = step.requests {
        if count == 1 {
          steps.removeFirst()
        } else {
          step.requests = count - 1
          steps[0] = step
        }
      }
      state.faults[path] = steps.isEmpty ? nil : steps
      return (step.faults, resource)
    }
  }

  /// A number counting up from 1 with every call (`Fault.etagPerRequest`).
  func nextSerial() -> Int {
    state.withLock { state in
      state.serial += 1
      return state.serial
    }
  }

  func record(_ request: RecordedRequest) {
    state.withLock { $0.log.append(request) }
  }

  var recordedRequests: [RecordedRequest] { state.withLock { $0.log } }

  func clearRecordedRequests() {
    state.withLock { $0.log.removeAll() }
  }

  var openConnectionCount: Int { state.withLock { $0.openSockets.count } }

  // MARK: Stopping

  /// Waits up to `timeout` for `stop()`; true if the server is stopping.
  func waitForStop(_ timeout: Duration) -> Bool {
    var descriptor = pollfd(fd: wakeReader, events: Int16(POLLIN), revents: 0)
    while true {
      let result = poll(&descriptor, 1, timeout.pollMilliseconds)
      if result < 0 && errno == EINTR { continue }
      return result > 0
    }
  }

  func stop() {
    let first = state.withLock { state in
      guard !state.stopped else { return false }
      state.stopped = true
      return true
    }
    guard first else { return }
    var byte: UInt8 = 1
    _ = write(wakeWriter, &byte, 1)
    // A connection accepted from now on is closed by the accept loop, which checks `stopped`
    // under the same lock, so every socket that needs shutting down is in this list.
    state.withLock { state in
      for socket in state.openSockets.values { shutdown(socket, Int32(SHUT_RDWR)) }
    }
    if let thread = acceptThread.withLock({ $0 }) { pthread_join(thread, nil) }
    let threads = state.withLock { state in
      defer {
        state.threads.removeAll()
        state.finished.removeAll()
      }
      return Array(state.threads.values)
    }
    for thread in threads { pthread_join(thread, nil) }
    close(listener)
    close(wakeReader)
    close(wakeWriter)
  }

  // MARK: Accepting

  private func acceptLoop() {
    var descriptors = [
      pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
      pollfd(fd: wakeReader, events: Int16(POLLIN), revents: 0),
    ]
    while true {
      descriptors[0].revents = 0
      descriptors[1].revents = 0
      let result = poll(&descriptors, 2, -1)
      if result < 0 {
        if errno == EINTR { continue }
        return
      }
      if descriptors[1].revents != 0 { return }
      guard descriptors[0].revents != 0 else { continue }
      let socket = accept(listener, nil, nil)
      if socket < 0 {
        // Out of descriptors: back off rather than spin on a listener that stays readable.
        if errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM {
          if waitForStop(.milliseconds(10)) { return }
        }
        continue
      }
      admit(socket)
    }
  }

  private func admit(_ socket: Int32) {
    // Glibc's module leaves out accept4, so the flag comes a moment late; harmless in tests.
    _ = fcntl(socket, F_SETFD, FD_CLOEXEC)
    Socket.disableNagle(socket)
    Socket.setTimeout(socket, option: SO_RCVTIMEO, configuration.idleTimeout)
    Socket.setTimeout(socket, option: SO_SNDTIMEO, configuration.idleTimeout)
    enum Admission {
      case admitted
      case refused
      case stopped
    }
    var joinable: [pthread_t] = []
    let admission = state.withLock { state -> Admission in
      joinable = state.finished.compactMap { state.threads.removeValue(forKey: $0) }
      state.finished.removeAll()
      guard !state.stopped else { return .stopped }
      guard state.openSockets.count < configuration.maxConnections else { return .refused }
      let id = state.nextConnection
      state.nextConnection += 1
      // Spawned under the lock: the thread's exit takes the lock too, so it cannot report itself
      // finished before it is in `threads`.
      guard
        let thread = spawnThread({ [self] in
          ConnectionHandler(core: self, socket: socket, id: id).run()
          connectionEnded(id)
        })
      else { return .refused }
      state.openSockets[id] = socket
      state.threads[id] = thread
      return .admitted
    }
    for thread in joinable { pthread_join(thread, nil) }
    switch admission {
    case .admitted:
      break
    case .stopped:
      close(socket)
    case .refused:
      // Sent before the client's request arrives, so closing leaves no unread data (which would
      // turn the close into a reset and could destroy the 503 before the client reads it).
      let response = Array(
        ("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
          .utf8)
      _ = Socket.sendAll(socket, response)
      shutdown(socket, Int32(SHUT_WR))
      var scratch = [UInt8](repeating: 0, count: 4096)
      var received = 1
      while received > 0 {
        received = scratch.withUnsafeMutableBytes {
          recv(socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
        }
      }
      close(socket)
    }
  }

  private func connectionEnded(_ id: Int) {
    state.withLock { state in
      if let socket = state.openSockets.removeValue(forKey: id) { close(socket) }
      state.finished.append(id)
    }
  }
}

private final class ThreadStart {
  let body: @Sendable () -> Void

  init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}

/// A joinable thread running `body`; nil if none could be made.
private func spawnThread(_ body: @escaping @Sendable () -> Void) -> pthread_t? {
  let start = Unmanaged.passRetained(ThreadStart(body)).toOpaque()
  var thread = pthread_t()
  let result = pthread_create(
    &thread, nil,
    { argument in
      Unmanaged<ThreadStart>.fromOpaque(argument!).takeRetainedValue().body()
      return nil
    }, start)
  guard result == 0 else {
    Unmanaged<ThreadStart>.fromOpaque(start).release()
    return nil
  }
  return thread
}

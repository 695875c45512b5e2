import Foundation
import KeyedArchive
import OutputFiles
import PortableFoundation
import PropertyList
import ResumeData

/// How a download ended.
public enum DownloadResult: Sendable, Hashable {
  /// The file is complete at its destination; its digest in lowercase hex (when computed).
  case completed(file: URL, digest: String?)
  /// Paused or cancelled: the resume data to continue from (also in the state file, if any).
  case paused(resumeData: Data)
  /// Failed; the resume data, when there is a partial file worth continuing.
  case failed(DownloadError, resumeData: Data?)
}

/// One resumable download that speaks Apple's resume data, over libcurl (Linux) or URLSession
/// (`DownloadConfiguration.engine`).
///
/// The partial file is appended to only when the server's 206 continues it exactly (Content-Range
/// starting at its length, the same total, no content encoding); a 200 replaces it (reported as a
/// restart), a 416 naming its length completes it, and any other answer leaves it untouched and
/// hands back resume data. Requests carry `Range`, `If-Range` (a strong ETag, else Last-Modified)
/// and `Accept-Encoding: identity`. Pausing cancels the task (it is never suspended: Foundation on
/// Linux would restart it from byte 0 and append), flushes the file and writes resume data in
/// Apple's layout.
public actor Download {
  /// The events, in order; finishes when the download ends.
  public nonisolated let events: AsyncStream<DownloadEvent>
  private let eventSink: AsyncStream<DownloadEvent>.Continuation
  /// Where the finished file goes.
  public nonisolated let destination: URL
  let configuration: DownloadConfiguration

  // What resume data records: the request as first made, the one that continues it (its URL
  // updated by redirects), the validators and the partial file's name.
  var record: ResumeRecord
  let partialURL: URL
  var total: Int64?
  var file: PartialFile?
  private var transfer: Transfer?
  private var stopRequested = false
  // A segmented download's state: the map read from resume data (until the run takes it up), the
  // run's book, fetcher and file.
  private var restoredMap: SegmentMap?
  var book: SegmentBook?
  private var fetcher: SegmentFetcher?
  var segmentFile: SegmentFile?
  // Flushes and state-file writes run here, in order, off Swift's cooperative pool; `persisting`
  // is set while a periodic one runs.
  let persistQueue = DispatchQueue(label: "resumedata.download.persist")
  let persisting = Flag()
  // When the state file was last written, and for how many bytes (nil: not yet by this process).
  private var lastPersist: (instant: ContinuousClock.Instant, bytes: Int64)?
  private var lastProgress: (instant: ContinuousClock.Instant, bytes: Int64)?
  private var speed = 0.0
  private var largestBacklog = 0

  /// A download of `url` from byte 0.
  ///
  /// - Throws: `DownloadError` with `.unsupportedURL` for anything but http and https.
  public init(url: URL, destination: URL, configuration: DownloadConfiguration)
    throws(DownloadError)
  {
    let headers = configuration.headers.map { URLRequestFields.Header($0.name, $0.value) }
    try self.init(
      request: URLRequestFields(url: url.absoluteString, headerFields: headers),
      destination: destination, configuration: configuration)
  }

  /// A download of a request (its headers kept) from byte 0.
  ///
  /// - Throws: `DownloadError` with `.unsupportedURL` for anything but http and https,
  ///   `.invalidHeader` for a header field that cannot be sent as it is.
  public init(
    request: URLRequestFields, destination: URL, configuration: DownloadConfiguration
  ) throws(DownloadError) {
    guard ResumePlan.isHTTP(request.url) else {
      throw DownloadError(.unsupportedURL, "\(request.url) is not an http or https URL")
    }
    try Self.checkEngine(configuration)
    try Self.checkHeaders(of: request, "the request")
    let name = "CFNetworkDownload_\(Self.randomSuffix()).tmp"
    self.init(
      original: request, current: request,
      partial: configuration.temporaryDirectory.appendingPathComponent(name), name: name,
      entityTag: nil, lastModified: nil, destination: destination, configuration: configuration)
  }

  /// A download continuing from resume data of any generation (Apple-made or ours).
  ///
  /// - Throws: `DownloadError`: `.invalidResumeData` when the blob does not decode or names
  ///   nothing to fetch, `.unsafePartialFile`, `.unsupportedURL`, `.invalidHeader` for a header
  ///   field of its requests that cannot be sent as it is.
  public init(resumeData: Data, destination: URL, configuration: DownloadConfiguration)
    throws(DownloadError)
  {
    let blob: ResumeData
    do {
      blob = try ResumeData(decoding: resumeData)
    } catch {
      throw DownloadError(.invalidResumeData, "the resume data does not decode: \(error)")
    }
    let plan = try ResumePlan(
      resumeData: blob, temporaryDirectory: configuration.temporaryDirectory,
      allowedDirectories: configuration.allowedDirectories)
    try Self.checkEngine(configuration)
    try Self.checkHeaders(of: plan.request, "the blob's current request")
    try Self.checkHeaders(of: plan.originalRequest, "the blob's original request")
    self.init(
      original: plan.originalRequest, current: plan.request, partial: plan.partialFile,
      name: plan.tempFileName, entityTag: plan.entityTag, lastModified: plan.lastModified,
      destination: destination, configuration: configuration, segments: plan.segments)
  }

  private init(
    original: URLRequestFields, current: URLRequestFields, partial: URL, name: String,
    entityTag: String?,
    lastModified: String?, destination: URL, configuration: DownloadConfiguration,
    segments: SegmentMap? = nil
  ) {
    restoredMap = segments
    (events, eventSink) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1024))
    record = ResumeRecord(
      original: original, current: current, entityTag: entityTag, lastModified: lastModified,
      tempFileName: name, directory: partial.deletingLastPathComponent(),
      generation: configuration.resumeDataGeneration, stateFile: configuration.stateFile)
    partialURL = partial
    self.destination = destination
    self.configuration = configuration
  }

  /// Refuses an engine this build lacks, and a certificate authority the engine cannot take or
  /// the file does not hold, before anything is opened.
  private static func checkEngine(_ configuration: DownloadConfiguration) throws(DownloadError) {
    let engine = configuration.engine
    guard DownloadEngine.isAvailable(engine) else {
      throw DownloadError(
        .unsupportedEngine, "the \(engine.rawValue) engine is not built in on this platform")
    }
    guard let authority = configuration.certificateAuthority else { return }
    guard DownloadEngine.trustsOwnAuthority(engine) else {
      throw DownloadError(
        .unsupportedEngine,
        "URLSession on this platform (FoundationNetworking) cannot trust a certificate authority "
          + "of one's own; use the curl engine")
    }
    try CertificateAuthority.check(authority)
  }

  /// Refuses a request whose header fields cannot be sent as they are: libcurl, under Foundation
  /// on Linux, leaves such a field out without a word, and a line break would otherwise let a
  /// value (from a blob of unknown origin, say) add fields of its own.
  private static func checkHeaders(of request: URLRequestFields, _ which: String)
    throws(DownloadError)
  {
    for field in request.headerFields {
      if let problem = field.problem {
        throw DownloadError(.invalidHeader, "\(which): \(problem)")
      }
    }
  }

  /// The lock a run holds on its partial file, so that two downloads never write into one file:
  /// two `resume`s of the same blob at once would otherwise append the same range twice and splice
  /// it. Taken on a descriptor of its own (`ExclusiveLock`), creating the file and its directory
  /// when missing; the file's readers and writers open it apart and take no lock, so the run never
  /// stands in its own way (segments falling back to one connection). A file that cannot be opened
  /// or locked for another reason (a file system without locks) is left unlocked (nil): opening it
  /// to write reports the first, and the second only loses this check.
  ///
  /// - Throws: `DownloadError` with `.partialFileInUse` when another download holds it.
  private static func lockPartialFile(_ url: URL) throws(DownloadError) -> ExclusiveLock? {
    try? FileManager.default.createDirectory(
      at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    do {
      return try ExclusiveLock(url.path)
    } catch .held {
      throw DownloadError(
        .partialFileInUse,
        "the partial file \(url.path) is being written by another download; "
          + "try again once it has ended")
    } catch {
      return nil
    }
  }

  /// The partial file.
  public nonisolated var partialFile: URL { partialURL }

  /// Bytes received so far (on disk, or on their way there).
  public var bytesReceived: Int64 { book?.bytesOnDisk ?? file?.length ?? 0 }

  /// The most chunks the transport held for the download at once, in any of its requests: over
  /// URLSession, while the delegate queue held it back (never more than `maximumQueuedChunks`);
  /// over libcurl, which hands over one piece at a time and waits, 1.
  @_spi(Testing)
  public var largestQueuedChunks: Int { largestBacklog }

  /// Pauses: the running request is cancelled and `run()` returns `.paused` with resume data.
  public func pause() {
    stopRequested = true
    transfer?.stop(.stopped)
    if let book, book.stop(.paused) { fetcher?.cancelAll() }
  }

  /// Runs the download to its end: completed, paused or failed. Call once.
  public func run() async -> DownloadResult {
    let result = await drive()
    switch result {
    case .completed(let file, let digest): eventSink.yield(.completed(file: file, digest: digest))
    case .paused(let data): eventSink.yield(.paused(resumeData: data))
    case .failed(let error, let data): eventSink.yield(.failed(error, resumeData: data))
    }
    eventSink.finish()
    return result
  }

  private func drive() async -> DownloadResult {
    // Held until the run ends, whatever way it ends.
    let lock: ExclusiveLock?
    do {
      lock = try Self.lockPartialFile(partialURL)
    } catch {
      return .failed(error, resumeData: nil)
    }
    defer { withExtendedLifetime(lock) {} }
    var restarts = 0
    let ownRange = record.current.headerFields.contains { HTTPFieldName.equal($0.name, "Range") }
    if restoredMap != nil || (connections > 1 && !ownRange) {
      switch await driveSegments(restarts: &restarts) {
      case .ended(let result):
        return result
      case .fallback(let reason, let adopted):
        eventSink.yield(.singleConnection(reason: reason))
        return await driveOne(restarts: restarts, adopted: adopted)
      }
    }
    return await driveOne(restarts: restarts)
  }

  /// The connections to use.
  private var connections: Int {
    min(
      max(configuration.connections, DownloadConfiguration.connectionRange.lowerBound),
      DownloadConfiguration.connectionRange.upperBound)
  }

  /// The download over one connection at a time, appending to the partial file; `adopted`, a
  /// segmented run's probe answered with the whole file, is its first exchange.
  private func driveOne(restarts: Int, adopted: Adoption? = nil) async -> DownloadResult {
    let file: PartialFile
    if let adopted {
      file = adopted.file
    } else {
      do {
        file = try PartialFile(url: partialURL, algorithm: configuration.digestAlgorithm)
      } catch {
        return .failed(error, resumeData: nil)
      }
    }
    self.file = file
    var attempt = 0
    var restarts = restarts
    var adopted = adopted
    // After a 416 that did not name the file's length, the next request asks for it.
    var lengthCheck = false
    while true {
      if stopRequested {
        if let adopted {
          adopted.transfer.stop(.stopped)
          _ = await adopted.transfer.outcome()
          adopted.transport.close()
        }
        return await paused()
      }
      let offset = file.length
      let transfer: Transfer
      let transport: any HTTPTransport
      let outcome: Transfer.Outcome
      if let taken = adopted {
        adopted = nil
        (transfer, transport) = (taken.transfer, taken.transport)
        self.transfer = transfer
        let watchdog = Task { await self.watch(transfer) }
        outcome = await transfer.outcome()
        watchdog.cancel()
      } else {
        let requestRange = record.current.headerFields.first {
          $0.name.caseInsensitiveCompare("Range") == .orderedSame
        }?.value
        var rangeHeaders = [(String, String)]()
        // Without a validator the server cannot say the file is unchanged: never splice.
        let validator = strongTag ?? record.lastModified
        if lengthCheck, let validator, offset > 0 {
          rangeHeaders = [("Range", "bytes=0-0"), ("If-Range", validator)]
        } else if offset > 0 {
          switch HTTPRange.resumeHeader(received: offset, requestRange: requestRange) {
          case .complete:
            return await finish(file)
          case .header(let value) where validator != nil:
            rangeHeaders = [("Range", value), ("If-Range", validator!)]
          case .header, .restart, .none:
            let reason =
              validator == nil
              ? "no ETag or Last-Modified was recorded, so the partial file cannot be trusted"
              : "the request's own range cannot be continued"
            if let failure = startOver(reason, truncate: file.truncate) { return failure }
            continue
          }
        } else if let requestRange {
          rangeHeaders = [("Range", requestRange)]
        }
        let checking = lengthCheck && !rangeHeaders.isEmpty
        lengthCheck = false
        if !checking { eventSink.yield(offset > 0 ? .resumed(offset: offset) : .started) }
        guard let made = makeTransport(connections: 1) else { return await unavailable() }
        transport = made
        transfer = Self.makeTransfer(
          record: record, eventSink: eventSink, file: file,
          expectation: .init(
            offset: offset, sentRange: offset > 0, knownTotal: total, lengthCheck: checking,
            ifRangeTag: offset > 0 ? strongTag : nil,
            ifRangeDate: offset > 0 && strongTag == nil ? record.lastModified : nil),
          rangeHeaders: rangeHeaders)
        self.transfer = transfer
        let watchdog = Task { await self.watch(transfer) }
        outcome = await transfer.run(request(rangeHeaders), over: transport)
        watchdog.cancel()
      }
      transport.close()
      self.transfer = nil
      largestBacklog = max(largestBacklog, transport.peakBacklog)
      learn(transfer.learned)
      switch outcome {
      case .complete, .alreadyComplete:
        return await finish(file)
      case .stopped:
        return await paused()
      case .askLength:
        lengthCheck = true
      case .restart(let reason):
        restarts += 1
        guard restarts <= 3 else {
          return await failed(DownloadError(.badPartialResponse, "\(reason) (after 3 restarts)"))
        }
        if let failure = startOver(reason, truncate: file.truncate) { return failure }
      case .failed(let error):
        if transfer.learned.restartReason != nil { restarts += 1 }
        attempt += 1
        guard error.isRetryable, attempt < configuration.retry.maximumAttempts else {
          return await failed(error)
        }
        let delay = configuration.retry.delay(
          beforeRetry: attempt, random: Double.random(in: 0...1))
        if await !sleep(delay) { return await paused() }
      }
    }
  }

  /// A transfer appending to `file`, whose accepted response is persisted (with the state file)
  /// before its body is let in.
  private static func makeTransfer(
    record: ResumeRecord, eventSink: AsyncStream<DownloadEvent>.Continuation, file: PartialFile,
    expectation: Transfer.Expectation, rangeHeaders: [(String, String)]
  ) -> Transfer {
    Transfer(
      file: file, expectation: expectation, rangeHeaders: rangeHeaders,
      emit: { [eventSink] in eventSink.yield($0) },
      accept: { [record = record, file] learned in
        // On the transport's thread, which waits for it: no hop to this actor (the executor it
        // would need may be the very thread that waits).
        var record = record
        record.learn(learned)
        if record.stateFile != nil {
          _ = try? record.persist(file.length, flush: file.synchronize)
        }
      })
  }

  /// A segmented run's probe answered with the whole file (200): the transfer that took its
  /// exchange over, the file it appends to and the transport it runs on, for `driveOne`.
  struct Adoption: Sendable {
    var transfer: Transfer
    var file: PartialFile
    var transport: any HTTPTransport
  }

  // MARK: Segments

  /// How a segmented run ended: with the download's result, or handing over to one connection.
  private enum SegmentsEnd {
    case ended(DownloadResult)
    /// Over one connection, for this reason; with the probe's exchange when its answer (the whole
    /// file) is being kept.
    case fallback(String, Adoption?)
  }

  /// How one connection of a segmented run ended.
  private enum WorkerEnd: Sendable {
    /// Nothing is left for it to take.
    case finished
    /// The probe's answer does not allow segments.
    case fallback(String)
    /// It failed `retry.maximumAttempts` times in a row without a byte; the last error.
    case gaveUp(DownloadError)
  }

  /// The download over several connections, each fetching segments of the file: from the map
  /// resume data recorded, or after a probe (`bytes=R-`) whose answer allows it.
  private func driveSegments(restarts: inout Int) async -> SegmentsEnd {
    let file: SegmentFile
    do {
      file = try SegmentFile(url: partialURL, algorithm: configuration.digestAlgorithm)
    } catch {
      return .ended(.failed(error, resumeData: nil))
    }
    segmentFile = file
    var map = restoredMap
    restoredMap = nil
    while true {
      if stopRequested { return .ended(await paused()) }
      let validator = strongTag ?? record.lastModified
      let size: Int64
      do {
        size = try file.size()
      } catch {
        return .ended(.failed(error, resumeData: nil))
      }
      // What is on disk is trusted only with a validator, and only as far as the file reaches.
      var reason: String?
      if validator == nil, map != nil || size > 0 {
        reason = "no ETag or Last-Modified was recorded, so the partial file cannot be trusted"
      } else if let known = map, size > known.total {
        reason = "the partial file is longer than the segment map's \(known.total) bytes"
      }
      if let reason {
        if let failure = startOver(reason, truncate: file.truncate) { return .ended(failure) }
        map = nil
        continue
      }
      let book: SegmentBook
      var probe: Int64?
      if let known = map.map({ size < $0.total ? $0.truncated(to: size) : $0 }) {
        var schedule = SegmentSchedule(map: known, minimumSize: configuration.minimumSegmentSize)
        schedule.prepare(connections: connections)
        book = SegmentBook(
          schedule: schedule,
          identity: SegmentBook.Identity(
            total: known.total, entityTag: strongTag,
            lastModified: strongTag == nil ? record.lastModified : nil))
        if known.isComplete {
          self.book = book
          return .ended(await finishSegments(file, total: known.total))
        }
        do {
          try file.allocate(known.total)
        } catch {
          return .ended(await failed(error))
        }
        eventSink.yield(
          known.bytesOnDisk > 0
            ? .resumedSegments(bytesOnDisk: known.bytesOnDisk, total: known.total) : .started)
        eventSink.yield(.segmented(connections: schedule.connectionsAtWork(of: connections)))
      } else {
        book = SegmentBook()
        probe = size
        eventSink.yield(size > 0 ? .resumed(offset: size) : .started)
      }
      map = nil
      self.book = book
      guard let transport = makeTransport(connections: connections) else {
        return .ended(await unavailable())
      }
      let adoption = AdoptionBox()
      let fetcher = makeFetcher(
        book: book, file: file, probe: probe, validator: validator, transport: transport,
        adoption: adoption)
      self.fetcher = fetcher
      if stopRequested { book.stop(.paused) }
      let watchdog = Task { await self.watchSegments(fetcher, book) }
      let ends = await runWorkers(book: book, fetcher: fetcher, probe: probe)
      watchdog.cancel()
      let adopted = adoption.value.withLock { $0 }
      // An adopted exchange goes on over the transport: only the fetcher's own end.
      if adopted != nil { fetcher.cancelAll() } else { fetcher.close() }
      largestBacklog = max(largestBacklog, fetcher.peakBacklog)
      self.fetcher = nil
      learnSegments()
      if let total = book.identity?.total, book.isComplete {
        return .ended(await finishSegments(file, total: total))
      }
      for case .fallback(let reason) in ends {
        // Nothing was written past the prefix: the file is what one connection continues.
        self.book = nil
        segmentFile = nil
        return .fallback(reason, adopted)
      }
      // A probe adopted and then stopped (a pause raced it): its transport is done with.
      adopted?.transfer.stop(.stopped)
      if let adopted {
        _ = await adopted.transfer.outcome()
        adopted.transport.close()
      }
      switch book.stop {
      case .paused:
        return .ended(await paused())
      case .failed(let error):
        return .ended(await failed(error))
      case .restart(let reason):
        restarts += 1
        guard restarts <= 3 else {
          return .ended(
            await failed(DownloadError(.badPartialResponse, "\(reason) (after 3 restarts)")))
        }
        if let failure = startOver(reason, truncate: file.truncate) { return .ended(failure) }
      case nil:
        var error = DownloadError(.network, "every connection ended before the file was complete")
        for case .gaveUp(let last) in ends { error = last }
        return .ended(await failed(error))
      }
    }
  }

  /// The fetcher of one segmented run. Its probe, when the first answer allows segments, sets up
  /// the schedule and persists the map before the file grows past its prefix, so that resume data
  /// describes the file at every instant.
  private func makeFetcher(
    book: SegmentBook, file: SegmentFile, probe: Int64?, validator: String?,
    transport: any HTTPTransport, adoption: AdoptionBox
  ) -> SegmentFetcher {
    let count = connections
    let minimumSize = configuration.minimumSegmentSize
    // A probe answered with the whole file (200): the answer is kept, as one connection's
    // transfer from the prefix on disk, never fetched twice.
    let (url, algorithm, known) = (partialURL, configuration.digestAlgorithm, total)
    let adopt = { @Sendable [record, eventSink] (start: Int64) -> Transfer? in
      guard let partial = try? PartialFile(url: url, algorithm: algorithm) else { return nil }
      let transfer = Self.makeTransfer(
        record: record, eventSink: eventSink, file: partial,
        expectation: .init(offset: start, sentRange: start > 0, knownTotal: known),
        rangeHeaders: start > 0 ? [("Range", "bytes=\(start)-")] : [])
      transfer.adopt(on: transport)
      adoption.value.withLock {
        $0 = Adoption(transfer: transfer, file: partial, transport: transport)
      }
      return transfer
    }
    return SegmentFetcher(
      book: book, file: file, request: request([]),
      probeValidator: (probe ?? 0) > 0 ? validator : nil, transport: transport, adopt: adopt,
      emit: { [eventSink] in eventSink.yield($0) },
      onProbe: { [record, eventSink] answer in
        let prefix = probe ?? 0
        var schedule = SegmentSchedule(
          map: SegmentMap(total: answer.identity.total, onDisk: [0..<prefix]),
          minimumSize: minimumSize)
        _ = schedule.assign(to: 0)
        schedule.prepare(connections: count)
        var record = record
        if let url = answer.url { record.current.url = url.absoluteString }
        record.entityTag = answer.identity.entityTag
        record.lastModified = answer.identity.lastModified
        do throws(DownloadError) {
          if record.stateFile != nil {
            _ = try record.persist(prefix, segments: schedule.map, flush: file.synchronize)
          }
          book.prepare(schedule, identity: answer.identity)
          try file.allocate(answer.identity.total)
        } catch {
          return error
        }
        eventSink.yield(.segmented(connections: schedule.connectionsAtWork(of: count)))
        return nil
      })
  }

  /// Runs the connections of a segmented run to their ends: the probe's alone until its answer
  /// sets up the schedule, then the others.
  private func runWorkers(
    book: SegmentBook, fetcher: SegmentFetcher, probe: Int64?
  ) async -> [WorkerEnd] {
    let count = connections
    let retry = configuration.retry
    return await withTaskGroup(of: WorkerEnd.self) { group in
      group.addTask {
        await Self.work(worker: 0, probe: probe, book: book, fetcher: fetcher, retry: retry)
      }
      let ready = probe == nil ? true : await book.waitUntilReady()
      if ready {
        for worker in 1..<max(count, 1) {
          group.addTask {
            await Self.work(worker: worker, probe: nil, book: book, fetcher: fetcher, retry: retry)
          }
        }
      }
      var ends = [WorkerEnd]()
      for await end in group { ends.append(end) }
      return ends
    }
  }

  /// One connection: takes segments (or first probes) until none is left or the run stops;
  /// retries a failed segment after a delay, giving up after `retry.maximumAttempts` failures in
  /// a row that brought no byte.
  private static func work(
    worker: Int, probe: Int64?, book: SegmentBook, fetcher: SegmentFetcher, retry: RetryPolicy
  ) async -> WorkerEnd {
    var probe = probe
    var failures = 0
    while book.stop == nil {
      let start: Int64
      let range: ClosedRange<Int64>?
      if let from = probe {
        (start, range) = (from, nil)
      } else if let next = book.assign(to: worker) {
        (start, range) = (next.start, next.range)
      } else {
        return .finished
      }
      let before = book.bytesOnDisk
      switch await fetcher.fetch(worker: worker, start: start, range: range) {
      case .done:
        failures = 0
        probe = nil
      case .stopped:
        probe = nil
      case .fallback(let reason):
        book.abandon()
        return .fallback(reason)
      case .restart(let reason):
        if book.stop(.restart(reason)) { fetcher.cancelAll() }
        return .finished
      case .failed(let error) where !error.isRetryable:
        if book.stop(.failed(error)) { fetcher.cancelAll() }
        return .finished
      case .failed(let error):
        // A probe whose answer set up the schedule goes on as that segment's connection.
        if book.map != nil { probe = nil }
        book.release(start, worker: worker)
        failures = book.bytesOnDisk > before ? 1 : failures + 1
        guard failures < retry.maximumAttempts else {
          if probe != nil { book.abandon() }
          return .gaveUp(error)
        }
        let delay = retry.delay(beforeRetry: failures, random: Double.random(in: 0...1))
        let deadline = ContinuousClock.now + delay
        while ContinuousClock.now < deadline, book.stop == nil {
          try? await Task.sleep(for: min(.milliseconds(20), deadline - .now))
        }
      }
    }
    return .finished
  }

  /// Takes in what the run's responses told: the validators and the URL they came from.
  func learnSegments() {
    guard let identity = book?.identity else { return }
    record.entityTag = identity.entityTag
    record.lastModified = identity.lastModified
    total = identity.total
    if let url = fetcher?.url { record.current.url = url.absoluteString }
  }

  /// The complete file of a segmented run: its digest (what was not digested as it arrived is
  /// read back in order), then into place.
  private func finishSegments(_ file: SegmentFile, total: Int64) async -> DownloadResult {
    await deliver { () throws(DownloadError) -> String? in
      // A file allocated by an earlier, longer version is cut to this one's length.
      if try file.size() != total { try file.trim(to: total) }
      let digest = try file.digest(of: total)
      try file.synchronize()
      return digest
    }
  }

  /// How often the watchdog looks at a running transfer: progress, stalls, the state file
  /// (`DownloadConfiguration.progressInterval` says which interval wins). Each look wakes two
  /// threads: beside a fast transfer that costs nothing, but at 1 MB/s over the curl engine four
  /// looks a second instead of one cost about 10 ms of CPU in 15 s, a third of what curl spends
  /// on the whole transfer.
  var watchInterval: Duration {
    max(
      .milliseconds(50),
      min(
        configuration.progressInterval, configuration.persistInterval,
        configuration.stallTimeout / 4))
  }

  /// Runs beside a segmented run: stalled connections, progress, the state file.
  private func watchSegments(_ fetcher: SegmentFetcher, _ book: SegmentBook) async {
    while !Task.isCancelled {
      try? await Task.sleep(for: watchInterval)
      if Task.isCancelled { return }
      fetcher.failStalled(after: configuration.stallTimeout)
      learnSegments()
      // The map is persisted only once the probe's answer set it up (the probe persisted it
      // first).
      housekeeping(bytes: book.bytesOnDisk, mayPersist: book.map != nil)
    }
  }

  /// What every watchdog tick does: hands freed memory back, reports progress, and brings the
  /// state file up to date, at once the first time `mayPersist` holds, then every persist interval
  /// while bytes arrive.
  private func housekeeping(bytes: Int64, mayPersist: Bool) {
    // URLSession's per-chunk buffers fragment the allocator; the curl engine allocates nothing
    // per piece, and a trim every tick would cost it more than its transfer.
    if configuration.releasesFreeMemory, configuration.engine == .urlSession {
      Allocator.releaseFreeMemory()
    }
    let now = ContinuousClock.now
    reportProgress(now)
    if configuration.stateFile != nil, mayPersist,
      lastPersist.map({ now - $0.instant >= configuration.persistInterval && $0.bytes != bytes })
        ?? true
    {
      lastPersist = (now, bytes)
      persistInBackground()
    }
  }

  /// The ETag when it is strong (a weak one cannot validate a byte range).
  private var strongTag: String? {
    guard let entityTag = record.entityTag, !entityTag.hasPrefix("W/") else { return nil }
    return entityTag
  }

  /// Empties the partial file (with `truncate`) and forgets the version it held, its segments
  /// included, to start over; a failure result when that is impossible.
  private func startOver(
    _ reason: String, truncate: () throws(DownloadError) -> Void
  ) -> DownloadResult? {
    do {
      try truncate()
    } catch {
      return .failed(error, resumeData: nil)
    }
    book = nil
    record.entityTag = nil
    record.lastModified = nil
    total = nil
    eventSink.yield(.restarted(reason: reason))
    return nil
  }

  private func learn(_ learned: Transfer.Learned) {
    record.learn(learned)
    if let learnedTotal = learned.total { total = learnedTotal }
  }

  /// Sleeps for a retry delay, waking early on pause; false when paused.
  private func sleep(_ delay: Duration) async -> Bool {
    let deadline = ContinuousClock.now + delay
    while ContinuousClock.now < deadline {
      if stopRequested { return false }
      try? await Task.sleep(for: min(.milliseconds(50), deadline - .now))
    }
    return !stopRequested
  }

  /// Runs beside a transfer: stall detection, progress, the state file, and handing the memory
  /// freed by the transfer back to the system.
  private func watch(_ transfer: Transfer) async {
    while !Task.isCancelled {
      // Backpressure needs no watching (the delegate queue holds URLSession back, libcurl waits
      // for its handler).
      try? await Task.sleep(for: watchInterval)
      if Task.isCancelled { return }
      if ContinuousClock.now - transfer.lastByte > configuration.stallTimeout {
        transfer.stop(
          .failed(
            DownloadError(
              .stalled, "no byte arrived for \(configuration.stallTimeout.components.seconds) s")))
        return
      }
      // What the response told (validators, redirects, length) goes into what is persisted.
      learn(transfer.learned)
      // The first bytes are persisted at once (a kill a moment later still resumes).
      let bytes = file?.length ?? 0
      housekeeping(bytes: bytes, mayPersist: bytes > 0)
    }
  }

  private func reportProgress(_ now: ContinuousClock.Instant) {
    guard file != nil || book != nil else { return }
    let bytes = bytesReceived
    if let last = lastProgress {
      let elapsed =
        Double((now - last.instant).components.attoseconds) / 1e18
        + Double((now - last.instant).components.seconds)
      // A little under the watchdog's interval, so that a late tick still reports.
      let interval = configuration.progressInterval.components
      let due = 0.8 * (Double(interval.seconds) + Double(interval.attoseconds) / 1e18)
      guard elapsed >= due, bytes != last.bytes || elapsed >= max(1, due) else { return }
      let instant = Double(bytes - last.bytes) / elapsed
      // A moving average smooths the bursts of a network that delivers in chunks.
      speed = speed == 0 ? instant : 0.7 * speed + 0.3 * instant
    }
    lastProgress = (now, bytes)
    let remaining = total.flatMap { total in
      speed > 0 ? Double(max(total - bytes, 0)) / speed : nil
    }
    eventSink.yield(
      .progress(
        DownloadProgress(
          bytes: bytes, expected: total, bytesPerSecond: speed, secondsRemaining: remaining)))
  }

  private func request(_ rangeHeaders: [(String, String)]) -> TransportRequest {
    // The URL was checked to parse when the download was made, and redirects only hand out URLs.
    var request = TransportRequest(url: URL(string: record.current.url)!, headers: [])
    let replaced: Set<String> = ["range", "if-range", "accept-encoding"]
    for header in record.current.headerFields where !replaced.contains(header.name.lowercased()) {
      request.headers.append((header.name, header.value))
    }
    for (name, value) in rangeHeaders { request.setHeader(name, value) }
    // A compressing server drops Range support for encoded responses: ask for the bytes as stored.
    request.setHeader("Accept-Encoding", "identity")
    return request
  }

  /// A transport of the configured engine for one run of exchanges (the connections of a
  /// segmented run share it); nil when this build lacks the engine.
  private func makeTransport(connections: Int) -> (any HTTPTransport)? {
    configuration.engine.makeTransport(
      TransportSettings(
        connections: connections, maximumQueuedChunks: configuration.maximumQueuedChunks,
        certificateAuthority: configuration.certificateAuthority,
        timeout: record.current.timeoutInterval))
  }

  /// The failure of a download whose engine this build lacks.
  private func unavailable() async -> DownloadResult {
    await failed(
      DownloadError(
        .unsupportedEngine,
        "the \(configuration.engine.rawValue) engine is not built in on this platform"))
  }
}

/// The adoption a segmented run's probe may make, set on the transport's thread.
final class AdoptionBox: Sendable {
  let value = Locked<Download.Adoption?>(nil)
}

/// A flag shared with work on another queue.
final class Flag: Sendable {
  let value = Locked<Bool>(false)
}

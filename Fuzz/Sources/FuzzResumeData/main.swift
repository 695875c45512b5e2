import Foundation
import FuzzCommon
@_spi(Differential) import KeyedArchive
@_spi(Differential) import PropertyList
@_spi(Differential) import ResumeData

#if canImport(Glibc)
  import Glibc
#endif

/// The check the resume-data target runs on every input the resume-data reader accepts: encoding it
/// in its own generation and container and reading that back gives the same generation, container,
/// entries and typed fields; diagnosing it, repairing it for a target, converting it to each
/// generation and editing its URL and headers may fail with an error but must not crash, and
/// whatever they produce must read back. A blob that names its partial file is also diagnosed and
/// repaired beside a file of that name (sparse, of a size near its byte count, in a scratch
/// directory): a repair without leave to truncate must leave the file's size alone, and one with
/// leave may only shorten it. A failed check stops the process with `fatalError`, which libFuzzer
/// reports as a crash.
enum ResumeDataHarness {
  static let limits = KeyedArchiveLimits(
    propertyList: PropertyListLimits(
      maximumObjectCount: 100_000, maximumValueLength: 1 << 20, maximumVisitedElements: 100_000),
    maximumDepth: 256, maximumVisits: 100_000)

  static func run(_ input: UnsafeRawBufferPointer) -> CInt {
    let data = Data(fuzzerInput: input)
    checkFastPath(data)
    guard let resume = try? ResumeData(decoding: data, limits: limits) else { return 0 }
    if let difference = ResumeDifferential.writerDifference(resume) {
      fatalError("writing from the bytes and through the tree differ: \(difference)")
    }
    _ = resume.findings()
    _ = (
      resume.currentRequest?.headerFields, resume.originalRequest?.url, resume.response?.statusCode
    )
    let encoded: Data
    do {
      encoded = try resume.encoded()
    } catch {
      fatalError("a decoded blob does not encode: \(error)")
    }
    guard let again = try? ResumeData(decoding: encoded, limits: KeyedArchiveLimits()) else {
      fatalError("the re-encoded blob does not decode")
    }
    guard again.generation == resume.generation, again.container == resume.container,
      again.entries == resume.entries, again.downloadURL == resume.downloadURL,
      again.bytesReceived == resume.bytesReceived, again.tempFileName == resume.tempFileName
    else {
      fatalError(
        "the re-encoded blob reads differently: \(resume.generation) → \(again.generation)")
    }
    transform(resume, read: data)
    besidePartialFile(resume)
    forURLSession(data, resume)
    return 0
  }

  // One system for each repair target the one call for Apple downloaders reaches.
  static let systems: [AppleSystem] = [
    AppleSystem(.iOS, 10, 0), AppleSystem(.iOS, 10, 3), AppleSystem(.iOS, 11, 1),
    AppleSystem(.iOS, 11, 4), AppleSystem(.iOS, 12, 1), AppleSystem(.iOS, 17, 5),
    AppleSystem(.iOS, 18, 2, networkFrameworkLoader: true),
  ]

  /// `ResumeData.forURLSession` on a system picked by the blob: a blob it hands back must read,
  /// and the system must resume it; one it refuses must say why.
  static func forURLSession(_ data: Data, _ resume: ResumeData) {
    let system = systems[(resume.originalCount / 7) % systems.count]
    switch ResumeData.forURLSession(data, on: system, partialFile: .notChecked, limits: limits) {
    case .resume(let bytes, _):
      guard let again = try? ResumeData(decoding: bytes, limits: KeyedArchiveLimits()),
        let target = system.repairTarget
      else { fatalError("forURLSession handed back a blob that does not read (\(system))") }
      let outcome = ResumeData.outcome(of: again.judgements(for: target))
      guard outcome == .resume else {
        fatalError("forURLSession handed back a blob \(system) would not resume: \(outcome)")
      }
    case .startOver(let reason, let findings):
      guard findings.contains(reason), !reason.message.isEmpty else {
        fatalError("forURLSession started over without a reason among its findings")
      }
    }
  }

  /// A directory of this process's own for partial files, in memory where Linux has one.
  static let scratch: URL = {
    let base =
      FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
    let directory = URL(fileURLWithPath: base).appendingPathComponent(
      "fuzz-resume-\(getpid())", isDirectory: true)
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory
  }()

  /// The size of a regular file, or nil.
  static func fileSize(_ path: String) -> Int64? {
    var status = stat()
    guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
    return Int64(status.st_size)
  }

  /// Diagnoses and repairs the blob with its partial file present (the rules that look at the file:
  /// `reconcile-bytes-received`, `move-local-path`, `hand-off-segments`).
  static func besidePartialFile(_ resume: ResumeData) {
    guard let name = resume.tempFileName, ResumeData.isSafeBareName(name), name.utf8.count < 200
    else { return }
    let pick = resume.originalCount
    let received = max(0, min(resume.bytesReceived ?? 0, 1 << 30))
    let mapped = (try? resume.segmentMap())?.map { min($0.total, 1 << 30) } ?? received
    // Around the recorded count, and the whole length a segmented download allocates.
    let size = [received, received + 1, max(0, received - 1), 0, mapped][pick % 5]
    let path = scratch.appendingPathComponent(name).path
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { return }
    let made = ftruncate(descriptor, off_t(size)) == 0
    close(descriptor)
    defer { unlink(path) }
    guard made else { return }
    _ = resume.findings(temporaryDirectory: scratch)
    let allowed = pick / 5 % 2 == 1
    let target = RepairTarget.allCases[pick / 10 % RepairTarget.allCases.count]
    let repaired = try? resume.repaired(
      for: target, temporaryDirectory: scratch, truncatingPartialFile: allowed)
    let after = fileSize(path)
    guard let after, allowed ? after <= size : after == size else {
      fatalError(
        "a repair for \(target) (leave to truncate: \(allowed)) took the partial file from \(size) bytes to \(after.map(String.init) ?? "nothing")"
      )
    }
    if let blob = repaired?.blob {
      guard let bytes = try? blob.encoded(), (try? ResumeData(decoding: bytes)) != nil else {
        fatalError("a blob repaired beside its partial file for \(target) does not read back")
      }
      _ = blob.findings(temporaryDirectory: scratch, for: target)
    }
  }

  /// `ResumeData(decoding:)` reads binary keyed blobs in place when it can; whatever it does, it
  /// must give what the eager path gives (see `ResumeDifferential`).
  static func checkFastPath(_ data: Data) {
    if let difference = ResumeDifferential.difference(data, limits: limits) {
      fatalError("the resume fast path and the eager path differ: \(difference)")
    }
    // The one-pass recognition of a healthy keyed blob, for no target and for one that varies
    // with the input (the targets that read keyed blobs most often: it answers nil for the rest).
    let targets: [RepairTarget] = [.ios13Later, .linux, .ios12] + RepairTarget.allCases
    for target in [nil, targets[data.count % targets.count]] {
      if let difference = ResumeDifferential.healthyDifference(data, for: target, limits: limits) {
        fatalError("the one-pass healthy reading and the full path differ: \(difference)")
      }
      if let difference = ResumeDifferential.healthyPlainDifference(
        data, for: target, limits: limits)
      {
        fatalError("the healthy plain reading and the full path differ: \(difference)")
      }
    }
  }

  /// Repairs, converts and edits a blob decoded from `data`; each result that is produced must read
  /// back.
  static func transform(_ resume: ResumeData, read data: Data) {
    // Which target and generation vary with the blob, so every one is reached across inputs
    // without multiplying the work per input.
    let pick = resume.originalCount
    let target = RepairTarget.allCases[pick % RepairTarget.allCases.count]
    let generation = ResumeDataGeneration.allCases[pick % ResumeDataGeneration.allCases.count]
    var produced = [Data?]()
    if let repaired = try? resume.repaired(for: target).blob {
      produced.append(try? repaired.encoded())
      // What the CLI writes: the input's own bytes only when no rule changed the blob, so that
      // passing an untouched blob through can never drop a change.
      let written = try? repaired.encoded(keepingUntouchedBytes: true)
      produced.append(written)
      if written == data, repaired != resume {
        fatalError("a repair for \(target) changed the blob but its input bytes were written")
      }
    }
    if let difference = ResumeDifferential.repairDifference(resume, for: target) {
      fatalError("a repaired blob differs from its bytes read back: \(difference)")
    }
    produced.append(try? resume.converted(to: generation).blob.encoded())
    if let difference = ResumeDifferential.conversionDifference(resume, to: generation) {
      fatalError("a converted blob differs from its bytes read back: \(difference)")
    }
    var edited = resume
    if (try? edited.setURL("https://fuzz.example/x")) != nil,
      (try? edited.setHeader("X-Fuzz", "1")) != nil
    {
      produced.append(try? edited.encoded())
    }
    for case let bytes? in produced where (try? ResumeData(decoding: bytes)) == nil {
      fatalError(
        "a repaired, converted or edited blob does not read back (target \(target), to \(generation))"
      )
    }
  }
}

/// libFuzzer's entry point.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
  // Every view made from what a writer knows of its bytes is checked against the checked view,
  // and every archive shared by objects that unfold alike against the one written apart.
  BinaryViewDifferential.checksWrittenViews = true
  SubArchiveDifferential.checksAlikeWrites = true
  return ResumeDataHarness.run(UnsafeRawBufferPointer(start: start, count: count))
}

import Foundation
import FuzzCommon
@_spi(Differential) import KeyedArchive
import PropertyList
@_spi(Differential) import ResumeData

/// The check the resume-data target runs on every input the resume-data reader accepts: encoding it
/// in its own generation and container and reading that back gives the same generation, container,
/// entries and typed fields; diagnosing it (without a directory: nothing touches the disk), repairing
/// it for a target, converting it to each generation and editing its URL and headers may fail with
/// an error but must not crash, and whatever they produce must read back. A failed check stops the
/// process with `fatalError`, which libFuzzer reports as a crash.
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
    return 0
  }

  /// `ResumeData(decoding:)` reads binary keyed blobs in place when it can; whatever it does, it
  /// must give what the eager path gives (see `ResumeDifferential`).
  static func checkFastPath(_ data: Data) {
    if let difference = ResumeDifferential.difference(data, limits: limits) {
      fatalError("the resume fast path and the eager path differ: \(difference)")
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
  ResumeDataHarness.run(UnsafeRawBufferPointer(start: start, count: count))
}

import Foundation
import FuzzCommon
import KeyedArchive
import PropertyList
import ResumeData

/// The check the resume-data target runs on every input the resume-data reader accepts: encoding it
/// in its own generation and container and reading that back gives the same generation, container,
/// entries and typed fields; diagnosing it (without a directory: nothing touches the disk) must not
/// crash. A failed check stops the process with `fatalError`, which libFuzzer reports as a crash.
enum ResumeDataHarness {
  static let limits = KeyedArchiveLimits(
    propertyList: PropertyListLimits(
      maximumObjectCount: 100_000, maximumValueLength: 1 << 20, maximumVisitedElements: 100_000),
    maximumDepth: 256, maximumVisits: 100_000)

  static func run(_ input: UnsafeRawBufferPointer) -> CInt {
    let data = Data(fuzzerInput: input)
    guard let resume = try? ResumeData(decoding: data, limits: limits) else { return 0 }
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
    return 0
  }
}

/// libFuzzer's entry point.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
  ResumeDataHarness.run(UnsafeRawBufferPointer(start: start, count: count))
}

// Reads one resume blob and prints what it is, with the ResumeData product alone.
import ResumeData

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Inspects the blob at `arguments[1]`; returns the exit status (64 usage, 65 unreadable blob).
public func inspectOne(_ arguments: [String]) -> Int32 {
  guard arguments.count == 2 else {
    print("usage: inspect-one FILE")
    return 64
  }
  do {
    let resume = try ResumeData(decoding: try Data(contentsOf: URL(filePath: arguments[1])))
    print("generation: \(resume.generation)")
    print("url: \(resume.downloadURL ?? "none")")
    print("received: \(resume.bytesReceived.map(String.init) ?? "none")")
    for finding in resume.findings() { print("finding: \(finding.code) \(finding.message)") }
    return 0
  } catch {
    print("error: \(error)")
    return 65
  }
}

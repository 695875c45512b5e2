import Downloader
import Foundation
import KeyedArchive
import PropertyList
import ResumeData

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

// The Swift blocks of the DocC articles (Sources/*/*.docc), each compiled here as it is written
// there, inside a function whose parameters stand for what the article leaves to the reader
// (`blob`, `session`, `url`, …). ArticleSnippetTests checks that every block's lines are here, in
// order, so an article cannot show code that no longer compiles. Nothing here runs.

/// What the Apple-platform snippets log to.
private struct ArticleLog {
  func info(_ message: String) {}
  func notice(_ message: String) {}
}

// GettingStartedOnApplePlatforms.md: the one call, and a named system.
private func gettingStarted(_ blob: Data, session: URLSession, url: URL) {
  let log = ArticleLog()
  var task: URLSessionDownloadTask
  let answer = ResumeData.forURLSession(
    blob, partialFile: .inDirectory(FileManager.default.temporaryDirectory))
  switch answer {
  case .resume(let data, let findings):
    for finding in findings { log.info("\(finding)") }
    task = session.downloadTask(withResumeData: data)
  case .startOver(let reason, _):
    log.notice("starting \(url) over: \(reason.message)")
    task = session.downloadTask(with: url)
  }
  task.resume()
}

private func namedSystem(_ blob: Data) -> URLSessionResume {
  let answer = ResumeData.forURLSession(
    blob, on: AppleSystem(.iOS, 11, 1), partialFile: .notChecked)
  return answer
}

// RepairingBlobs.md.
private func repairing(_ data: Data, folder: URL, output: URL) throws {
  let blob = try ResumeData(decoding: data)
  let result = try blob.repaired(for: .ios11Early, temporaryDirectory: folder)
  for finding in result.findings { print(finding) }
  if let repaired = result.blob {
    try repaired.encoded(keepingUntouchedBytes: true).write(to: output)
  }
}

// ReadingResumeDataFromLogsAndContainers.md: captured text, a stored blob, a document.
private func capturedText(_ line: String) throws {
  let (resume, captured) = try ResumeData.decoding(captured: Data(line.utf8))
  print(captured.detail)  // "hex text (on 134 lines)"
  print(resume.generation, resume.downloadURL ?? "no URL")
}

private func storedText(_ stored: String, session: URLSession, url: URL) {
  let temporary = FileManager.default.temporaryDirectory
  let answer = ResumeData.forURLSession(
    text: stored, partialFile: .inDirectory(temporary))
  switch answer {
  case .resume(let data, _):
    session.downloadTask(withResumeData: data).resume()
  case .startOver(let reason, _):
    print(reason.message)
    session.downloadTask(with: url).resume()
  }
}

private func document(_ documentBytes: Data) throws {
  if let container = try BlobContainer.scan(documentBytes) {
    for found in container.blobs {
      switch found.result {
      case .success(let blob): print(found.keyPath, blob.detail)
      case .failure(let error): print(found.keyPath, error)
      }
    }
  }
}

// PropertyList.md.
private func propertyList(_ bytes: Data) throws -> (PropertyListFormat, Data) {
  let (value, format) = try PropertyListValue.decode(bytes)
  if let url = value["NSURLSessionDownloadURL"] {
    print(url)
  }
  let xml = try value.encoded(as: .xml)  // what CoreFoundation would write
  return (format, xml)
}

// KeyedArchive.md.
private func keyedArchive(_ archivedRequest: Data) throws -> Data {
  let request = try URLRequestArchive(decoding: archivedRequest)
  print(request.url ?? "no URL", request.headerValue("Range") ?? "no Range")
  let moved = try request.settingURL("https://mirror.example.com/a.zip")
  let bytes = try moved.encoded()
  return bytes
}

// DownloadingOnLinux.md.
private func downloading(partialFiles: URL, states: URL, target: URL, saved: URL) async throws {
  func keep(_ resumeData: Data?) {}
  var configuration = DownloadConfiguration(temporaryDirectory: partialFiles)
  configuration.stateFile = states.appendingPathComponent("model.resume")
  let download = try Download(
    url: URL(string: "https://example.com/model.bin")!, destination: target,
    configuration: configuration)
  switch await download.run() {
  case .completed(let file, let digest): print(file.path, digest ?? "")
  case .paused(let resumeData): try resumeData.write(to: saved)
  case .failed(let error, let resumeData):
    print(error)
    keep(resumeData)
  }
}

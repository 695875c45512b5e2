import Dispatch
import Downloader
import Foundation
import KeyedArchive
import PropertyList
import ResumeData

/// How `resumedata download` starts besides a plain URL: from a partial file and its sidecar
/// (`--partial`, as `export` writes them), and with a check, once, of whether the server will let
/// the download resume (the probe's judgement for this toolkit's downloader).
extension DownloadCommand {
  /// A partial file and its sidecar, read and checked for `download --partial`.
  struct PartialStart {
    /// The partial file.
    let file: URL
    /// Its size.
    let size: Int64
    /// The sidecar's values.
    let pair: PartialPair
    /// The sidecar's path.
    let sidecar: String

    /// Reads `--partial FILE` and `FILE.json`; nil without the option. A missing file is exit 66,
    /// a malformed sidecar 65, a pair that cannot be continued safely (no validator, a file
    /// longer than the sidecar vouches for) 1.
    static func read(_ parsed: Arguments) throws(CommandError) -> PartialStart? {
      guard let path = parsed.value("--partial") else { return nil }
      var status = stat()
      guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
        throw CommandError(.unreadableInput, "cannot read: not a regular file", file: path)
      }
      let sidecar = PartialPair.sidecarPath(of: path)
      let pair = try PartialPair.read(sidecar: sidecar)
      let size = Int64(status.st_size)
      guard pair.validator != nil else {
        throw CommandError(
          .failure,
          "the sidecar records no ETag or Last-Modified date: the partial file cannot be continued without splicing the risk in (`resumedata make --trust-server-validator` checks its last bytes against the server)",
          file: sidecar)
      }
      if let bytes = pair.bytes, size > bytes {
        throw CommandError(
          .failure,
          "the partial file holds \(size) bytes, but its sidecar vouches for \(bytes): the bytes past them are not known to be the file's",
          file: path)
      }
      return PartialStart(
        file: URL(fileURLWithPath: path).standardizedFileURL, size: size, pair: pair,
        sidecar: sidecar)
    }

    /// A download continuing the partial file where it is (its directory as the temporary one),
    /// from `url` (the sidecar's unless one is given), with the sidecar's header fields and the
    /// configuration's.
    func download(url: String, destination: URL, configuration: DownloadConfiguration)
      throws(CommandError) -> Download
    {
      var headers = pair.headers.map { URLRequestFields.Header($0.name, $0.value) }
      for (name, value) in configuration.headers {
        headers.removeAll { HTTPFieldName.equal($0.name, name) }
        headers.append(URLRequestFields.Header(name, value))
      }
      do {
        let current = try URLRequestArchive(
          URLRequestFields(url: url, headerFields: headers)
        ).encoded()
        let original = try URLRequestArchive(
          URLRequestFields(url: pair.originalURL ?? url, headerFields: headers)
        ).encoded()
        var entries: PropertyListDictionary = [
          ResumeDataKey.downloadURL: .string(url),
          ResumeDataKey.bytesReceived: .integer(PropertyListInteger(size)),
          ResumeDataKey.currentRequest: .data(current),
          ResumeDataKey.originalRequest: .data(original),
        ]
        if let tag = pair.entityTag { entries[ResumeDataKey.entityTag] = .string(tag) }
        if let date = pair.lastModified {
          entries[ResumeDataKey.serverDownloadDate] = .string(date)
        }
        entries[ResumeDataKey.tempFileName] = .string(file.lastPathComponent)
        let blob = try ResumeData(building: entries, as: .keyed).encoded()
        return try Download(
          resumeData: blob, destination: destination, configuration: configuration)
      } catch let error as DownloadError {
        throw .usage(error.message)
      } catch {
        throw CommandError(.failure, "\(error)", file: sidecar)
      }
    }
  }

  /// Whether the server will let this download resume, from a short probe (the plain GET and
  /// the ranged ones, at most 10 seconds): this downloader's verdict, nil when the probe gets no
  /// answer (the download then says what happens).
  static func resumeCheck(_ url: URL, configuration: DownloadConfiguration) -> ProbeVerdict? {
    var options = ProbeOptions()
    options.headers = configuration.headers
    options.requests = 1
    options.asksAsAppleLoaders = false
    options.timeout = .seconds(10)
    guard let report = try? ProbeCommand.probe(url, options: options) else { return nil }
    return report.verdict(.resumedata)
  }

  /// The note `download` prints once at the start when the server will not let it resume.
  static func resumeNote(_ verdict: ProbeVerdict) -> String? {
    // An error status is the download's own failure, which it reports itself.
    guard !verdict.resumes, !verdict.reasons.contains("http-status") else { return nil }
    return CommandError.oneLine(
      "note: if interrupted, this download cannot resume: it \(verdict.summary)"
        + (verdict.reasons.isEmpty ? "" : " (\(verdict.reasons.joined(separator: ", ")))"))
  }

  /// `--json`'s `resumeCheck`: null when not checked.
  static func resumeCheckJSON(_ verdict: ProbeVerdict?) -> String {
    guard let verdict else { return "null" }
    return
      "{\"resumes\": \(verdict.resumes), \"outcome\": \(JSON.string(verdict.outcome.rawValue)), "
      + "\"reasons\": [\(verdict.reasons.map { JSON.string($0) }.joined(separator: ", "))], "
      + "\"message\": \(JSON.string(verdict.summary))}"
  }
}

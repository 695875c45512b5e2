import Downloader
import Foundation
import OutputFiles
import ResumeData

/// `resumedata export BLOB --temp-dir DIR -o FILE.part`: a blob's partial file and a JSON sidecar
/// for Range-based downloaders (and `resumedata download --partial`).
enum ExportCommand {
  /// The text `resumedata export --help` prints.
  static let help = """
    OVERVIEW: Write a blob's partial file and a JSON sidecar for Range-based downloaders.

    Copies the partial file BLOB names (its TempFileName in DIR, or its LocalPath inside
    DIR) to FILE.part, and writes FILE.part.json beside it: the URL to continue from, the
    original URL, the bytes, the ETag and Last-Modified date, the validator to send as
    If-Range, and the request's header fields. The partial file itself is left as it
    is. A download over several connections exports its contiguous prefix only (what
    follows the first gap is not a prefix of the file). `resumedata download --partial
    FILE.part` continues from the pair; any client that resumes with Range and If-Range
    can.

    USAGE: resumedata export BLOB|- -o FILE.part [--temp-dir DIR] [--json]

    ARGUMENTS:
      BLOB              The resume data (- reads standard input).

    OPTIONS:
      -o, --output FILE.part
                        The partial file to write (replaced atomically); the sidecar is
                        FILE.part.json.
      --temp-dir DIR    The directory that holds the blob's partial file (default: BLOB's
                        directory).
      --json            Print {"schemaVersion": 1, "input", "partialFile", "sidecar",
                        "bytes", "url", "validator"} instead of the line.
      -h, --help        Show this help.

    EXIT STATUS:
      0 written, 1 nothing to export (no partial file, no validator) or a write failed,
      64 usage error, 65 malformed blob, 66 unreadable blob or partial file.

    EXAMPLES:
      resumedata export model.resumedata --temp-dir ~/Library/Caches -o model.bin.part
      resumedata export Fixtures/resume/keyed-v4.archive --temp-dir partials -o archive.zip.part

    """

  /// The entry of `export` in the command table.
  static let spec = CommandSpec(
    name: "export",
    summary: "Write a blob's partial file and a JSON sidecar for Range-based downloaders.",
    help: help,
    options: [
      .option("-o", "--output", value: .file), .option("--temp-dir", value: .directory),
      .flag("--json"),
    ],
    arguments: .file, run: run(_:streams:))

  /// Runs `resumedata export`.
  static func run(_ arguments: [String], streams: Streams) throws(CommandError) {
    guard let parsed = try Arguments.command(arguments, spec: spec, streams: streams) else {
      return
    }
    guard let output = parsed.output, output != "-" else {
      throw .usage("export needs -o FILE.part (a file: the sidecar goes beside it)")
    }
    guard case .file(let partialPath) = try Files.downloadTarget(output) else {
      throw CommandError(
        .failure, "cannot write: not a regular file (the sidecar goes beside it)", file: output)
    }
    let (path, input) = try parsed.readSingleFile(for: "export", streams: streams)
    let blob = try ResumeInput.decode(input, file: path)
    let directory =
      parsed.value("--temp-dir").map { URL(fileURLWithPath: $0, isDirectory: true) }
      ?? (path == "-"
        ? URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
        : URL(fileURLWithPath: path).deletingLastPathComponent())
    let plan: ResumePlan
    do {
      plan = try ResumePlan(resumeData: blob, temporaryDirectory: directory)
    } catch {
      throw CommandError(.failure, error.message, file: path)
    }
    guard plan.entityTag != nil || plan.lastModified != nil else {
      throw CommandError(
        .failure,
        "the blob records neither an ETag nor a Last-Modified date: a continuation of its partial file could not be checked",
        file: path)
    }
    var status = stat()
    guard stat(plan.partialFile.path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
      throw CommandError(
        .unreadableInput,
        "the partial file \(plan.partialFile.lastPathComponent) is not in \(directory.path)",
        file: path)
    }
    // A segmented download's file is allocated to the whole length: only its prefix is the file's.
    let size = Int64(status.st_size)
    let bytes = plan.segments.map { min($0.contiguousPrefix, size) } ?? size
    guard bytes > 0 else {
      throw CommandError(.failure, "the partial file holds no bytes to export", file: path)
    }
    try copy(plan.partialFile.path, bytes: bytes, to: partialPath)
    let pair = PartialPair(
      url: plan.request.url, originalURL: plan.originalRequest.url, bytes: bytes,
      entityTag: plan.entityTag, lastModified: plan.lastModified,
      headers: plan.request.headerFields.map { ($0.name, $0.value) },
      partialFile: URL(fileURLWithPath: partialPath).lastPathComponent)
    let sidecar = PartialPair.sidecarPath(of: output)
    try Files.write(Data(pair.json.utf8), to: sidecar, streams: streams)
    if parsed.has("--json") {
      var object = JSONObject.document()
      object.add("input", string: path)
      object.add("partialFile", string: output)
      object.add("sidecar", string: sidecar)
      object.add("bytes", String(bytes))
      object.add("url", string: pair.url)
      object.add("validator", string: pair.validator)
      streams.print(object.rendered())
    } else {
      streams.print(
        CommandError.oneLine(
          "\(output): \(bytes) bytes of \(pair.url), If-Range \(pair.validator ?? "")")
          + "\n" + CommandError.oneLine("\(sidecar): the sidecar"))
    }
  }

  /// Copies the first `bytes` bytes of `source` to `destination` through a temporary file beside
  /// it, flushed, then renamed over it: a megabyte at a time, however large the file.
  static func copy(_ source: String, bytes: Int64, to destination: String) throws(CommandError) {
    let input = open(source, O_RDONLY | O_CLOEXEC)
    guard input >= 0 else {
      throw CommandError(
        .unreadableInput, "cannot read: \(String(cString: strerror(errno)))", file: source)
    }
    defer { close(input) }
    let url = URL(fileURLWithPath: destination)
    let temporary = url.deletingLastPathComponent().appendingPathComponent(
      ".\(url.lastPathComponent).\(UUID().uuidString.prefix(8)).tmp"
    ).path
    let output = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
    guard output >= 0 else {
      throw CommandError(
        .failure, "cannot write: \(String(cString: strerror(errno)))", file: destination)
    }
    var failure: CommandError?
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    var offset: Int64 = 0
    copying: while offset < bytes {
      let wanted = Int(min(Int64(buffer.count), bytes - offset))
      let read = buffer.withUnsafeMutableBytes {
        pread(input, $0.baseAddress, wanted, off_t(offset))
      }
      if read < 0, errno == EINTR { continue }
      guard read > 0 else {
        failure = CommandError(
          .unreadableInput,
          read == 0
            ? "the partial file ended at byte \(offset)"
            : "cannot read: \(String(cString: strerror(errno)))", file: source)
        break copying
      }
      var written = 0
      while written < read {
        let count = buffer.withUnsafeBytes {
          write(output, $0.baseAddress! + written, read - written)
        }
        if count < 0, errno == EINTR { continue }
        guard count > 0 else {
          failure = CommandError(
            .failure, "cannot write: \(String(cString: strerror(errno)))", file: destination)
          break copying
        }
        written += count
      }
      offset += Int64(read)
    }
    if failure == nil, fsync(output) != 0 {
      failure = CommandError(
        .failure, "cannot write: \(String(cString: strerror(errno)))", file: destination)
    }
    close(output)
    if failure == nil, rename(temporary, destination) != 0 {
      failure = CommandError(
        .failure, "cannot write: \(String(cString: strerror(errno)))", file: destination)
    }
    if let failure {
      unlink(temporary)
      throw failure
    }
  }
}

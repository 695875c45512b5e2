import Foundation
import ResumeData
import ResumeDataBatch

/// The walk of `resumedata find`: every regular file under the paths given (links never
/// followed), each read under a size limit and looked at for resume blobs in every form, the
/// partial files (`CFNetworkDownload_*.tmp`) gathered on the way.
struct FindWalk {
  /// Where a blob was found, and what it is.
  struct Found {
    var file: String
    var keyPath: ContainerKeyPath?
    var line: Int?
    /// The byte offset in a file that is not text (a database) where base64 or hex of it starts.
    var offset: Int?
    var result: Result<(resume: ResumeData, captured: CapturedBlob), ResumeDataError>
    /// The app container the file is in (the directory holding `tmp/`), if any.
    var container: String?

    /// `FILE`, `FILE at KEYPATH` or `FILE:LINE`.
    var place: String {
      var text = file
      if let line { text += ":\(line)" }
      if let offset { text += "@\(offset)" }
      if let keyPath { text += " at \(keyPath)" }
      return text
    }
  }

  /// A file or directory left out, and why.
  struct Skipped {
    var path: String
    var reason: String
  }

  let maximumFileSize: Int
  let maximumFiles: Int
  var found: [Found] = []
  /// Every partial file met, by path, with its size.
  var partials: [(path: String, size: Int64)] = []
  var unreadable: [Skipped] = []
  var skipped: [Skipped] = []
  var filesSeen = 0
  /// Whether the walk stopped at `maximumFiles`.
  var stopped = false

  init(maximumFileSize: Int, maximumFiles: Int) {
    self.maximumFileSize = maximumFileSize
    self.maximumFiles = maximumFiles
  }

  /// Whether a file name is that of a CFNetwork partial file.
  static func isPartialFile(_ name: String) -> Bool {
    name.hasPrefix("CFNetworkDownload_") && name.hasSuffix(".tmp")
  }

  mutating func walk(_ path: String) {
    var status = stat()
    guard lstat(path, &status) == 0 else {
      unreadable.append(Skipped(path: path, reason: String(cString: strerror(errno))))
      return
    }
    switch status.st_mode & S_IFMT {
    case S_IFDIR:
      let names: [String]
      do {
        names = try FileManager.default.contentsOfDirectory(atPath: path)
      } catch {
        unreadable.append(Skipped(path: path, reason: "cannot list the directory"))
        return
      }
      let base = path.hasSuffix("/") ? path : path + "/"
      for name in names.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
        guard !stopped else { return }
        walk(base + name)
      }
    case S_IFREG:
      guard filesSeen < maximumFiles else {
        stopped = true
        return
      }
      filesSeen += 1
      look(at: path, size: Int64(status.st_size))
    case S_IFLNK:
      // Never followed: a link could lead out of the tree, or around it forever.
      skipped.append(Skipped(path: path, reason: "a symbolic link (not followed)"))
    default:
      skipped.append(Skipped(path: path, reason: "not a regular file"))
    }
  }

  private mutating func look(at path: String, size: Int64) {
    let name = (path as NSString).lastPathComponent
    if Self.isPartialFile(name) {
      partials.append((path, size))
      return
    }
    guard size <= Int64(maximumFileSize) else {
      skipped.append(Skipped(path: path, reason: "larger than \(maximumFileSize) bytes"))
      return
    }
    let bytes: Data
    do {
      bytes = try FileAccess.read(path, limit: maximumFileSize, regularFileOnly: true)
    } catch {
      unreadable.append(Skipped(path: path, reason: error.message))
      return
    }
    let container = Self.container(of: path)
    let named = name.lowercased().contains("resumedata") || name.lowercased().contains("resume")
    // The whole file, in any form.
    do {
      let captured = try CapturedBlob.read(bytes)
      do {
        let resume = try ResumeData(decoding: captured.bytes)
        found.append(
          Found(file: path, result: .success((resume, captured)), container: container))
        return
      } catch let error as ResumeDataError {
        // A blob that does not read is reported when the file says it is one: its name, a
        // text form that decoded to what starts a blob, a masked Network.framework archive.
        if error.code != .notResumeData,
          named || captured.form != .raw || NetworkFrameworkMask.isMasked(bytes)
        {
          found.append(Found(file: path, result: .failure(error), container: container))
          return
        }
      } catch {
        return
      }
    } catch let error as ResumeDataError {
      if error.code == .elidedDescription || error.code == .capturedText && named {
        found.append(Found(file: path, result: .failure(error), container: container))
        return
      }
    } catch {
      return
    }
    // A document of blobs.
    if let document = try? BlobContainer.scan(bytes) {
      for blob in document.blobs {
        found.append(
          Found(
            file: path, keyPath: blob.keyPath,
            result: blob.result.flatMap { captured in
              Result { (try ResumeData(decoding: captured.bytes), captured) }
                .mapError {
                  $0 as? ResumeDataError ?? ResumeDataError(.notResumeData, "\($0)", at: "")
                }
            }, container: container))
      }
      return
    }
    // A log: blobs on its lines.
    // Text: UTF-8 without NUL (which text files do not hold and databases do).
    if !bytes.contains(0), String(validating: bytes, as: UTF8.self) != nil {
      scanLines(bytes, file: path, container: container)
    } else {
      // A database (SQLite keeps a string column's text as it is): base64 or hex runs in it.
      let array = [UInt8](bytes)
      for token in Self.tokens(array) {
        guard let captured = try? CapturedBlob.read(Data(token)), captured.form != .raw,
          let resume = try? ResumeData(decoding: captured.bytes)
        else { continue }
        found.append(
          Found(
            file: path, offset: token.startIndex, result: .success((resume, captured)),
            container: container))
      }
    }
  }

  /// Runs of base64 or hex of 64 characters or more, and NSData's `<…>`, on each line; and the
  /// description of a resume dictionary NSLog printed over several lines (a line ending in `{`,
  /// up to a line that is `}`).
  private mutating func scanLines(_ bytes: Data, file: String, container: String?) {
    let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
    var lineNumber = 0
    var skipUntil = 0
    for (index, line) in lines.enumerated() {
      lineNumber += 1
      guard index >= skipUntil else { continue }
      if let described = Self.describedDictionary(lines, from: index) {
        if let captured = try? CapturedBlob.read(described.text, as: .description),
          let resume = try? ResumeData(decoding: captured.bytes)
        {
          found.append(
            Found(
              file: file, line: lineNumber, result: .success((resume, captured)),
              container: container))
          skipUntil = described.end
          continue
        }
      }
      for token in Self.tokens(Array(line)) {
        guard let captured = try? CapturedBlob.read(Data(token)), captured.form != .raw,
          let resume = try? ResumeData(decoding: captured.bytes)
        else { continue }
        found.append(
          Found(
            file: file, line: lineNumber, result: .success((resume, captured)),
            container: container))
      }
    }
  }

  /// A dictionary's description that opens at the end of line `index` (after a log's prefix)
  /// and closes at a line that is `}`, holding a resume key: its text, and the line after it.
  static func describedDictionary(_ lines: [Data.SubSequence], from index: Int) -> (
    text: Data, end: Int
  )? {
    let line = lines[index]
    guard let last = line.last(where: { $0 != 0x0D && $0 != 0x20 }), last == UInt8(ascii: "{"),
      let open = line.lastIndex(of: UInt8(ascii: "{"))
    else { return nil }
    var text = Data(line[open...])
    for end in (index + 1)..<min(lines.count, index + 10_000) {
      text.append(0x0A)
      text.append(contentsOf: lines[end])
      let trimmed = lines[end].filter { $0 != 0x0D && $0 != 0x20 }
      if trimmed == Data("}".utf8) {
        let resumeKey = Data("NSURLSession".utf8)
        guard text.range(of: resumeKey) != nil else { return nil }
        return (text, end + 1)
      }
    }
    return nil
  }

  static func tokens(_ line: [UInt8]) -> [ArraySlice<UInt8>] {
    var tokens = [ArraySlice<UInt8>]()
    var index = 0
    while index < line.count {
      if line[index] == UInt8(ascii: "<") {
        var end = index + 1
        while end < line.count, CapturedTextProbe.isHexOrSpace(line[end]) { end += 1 }
        if end < line.count, line[end] == UInt8(ascii: ">"), end - index > 16 {
          tokens.append(line[index...end])
          index = end + 1
          continue
        }
      }
      if CapturedTextProbe.isBase64(line[index]) {
        var end = index
        while end < line.count, CapturedTextProbe.isBase64(line[end]) { end += 1 }
        if end - index >= 64 { tokens.append(line[index..<end]) }
        index = max(end, index + 1)
        continue
      }
      index += 1
    }
    return tokens
  }

  /// The app container a file is in: the nearest directory above it that holds a `tmp`
  /// directory (an app's container as Xcode downloads it, `AppData/`, or a device's
  /// `Data/Application/UUID/`), or nil.
  static func container(of path: String) -> String? {
    var directory = (path as NSString).deletingLastPathComponent
    for _ in 0..<64 {
      // Not the file system's root: /tmp is the machine's, not an app's.
      guard directory != "/" else { return nil }
      let here = directory.isEmpty ? "." : directory
      var status = stat()
      if lstat(here + "/tmp", &status) == 0, status.st_mode & S_IFMT == S_IFDIR { return here }
      guard !directory.isEmpty else { return nil }
      directory = (directory as NSString).deletingLastPathComponent
    }
    return nil
  }
}

/// The characters the line scan of `find` takes for captured text.
enum CapturedTextProbe {
  static func isBase64(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "/"),
      UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "="):
      true
    default: false
    }
  }

  static func isHexOrSpace(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
      UInt8(ascii: "A")...UInt8(ascii: "F"), 0x20:
      true
    default: false
    }
  }
}

import Foundation
import ResumeData

/// The files a command's FILE or DIR arguments name: a directory stands for every blob under it.
enum DirectoryWalk {
  /// One argument expanded: the files to process, in order, and the directories that could not
  /// be listed (each reported as an unreadable input).
  struct Expansion {
    var files: [String] = []
    var unreadable: [(path: String, reason: String)] = []
    /// Whether any argument was a directory (commands then print a summary).
    var sawDirectory = false
  }

  /// Expands the arguments: a file (or `-`) is itself, a directory every regular file under it,
  /// recursively, in byte order of their names. Names starting with `.` (hidden files, and the
  /// temporary files of an atomic write) and ending in `.bak` (`--backup` copies) are skipped, and
  /// symbolic links are not followed into directories, so that a walk cannot loop.
  static func expand(_ arguments: [String]) -> Expansion {
    var expansion = Expansion()
    for argument in arguments {
      var status = stat()
      if argument != "-", stat(argument, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
        expansion.sawDirectory = true
        walk(argument, into: &expansion)
      } else {
        expansion.files.append(argument)
      }
    }
    return expansion
  }

  private static func walk(_ directory: String, into expansion: inout Expansion) {
    let names: [String]
    do {
      names = try FileManager.default.contentsOfDirectory(atPath: directory)
    } catch {
      expansion.unreadable.append((directory, "cannot list the directory"))
      return
    }
    let base = directory.hasSuffix("/") ? directory : directory + "/"
    for name in names.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) })
    where !name.hasPrefix(".") && !name.hasSuffix(".bak") {
      let path = base + name
      var status = stat()
      guard lstat(path, &status) == 0 else {
        expansion.unreadable.append((path, String(cString: strerror(errno))))
        continue
      }
      switch status.st_mode & S_IFMT {
      case S_IFDIR: walk(path, into: &expansion)
      case S_IFREG: expansion.files.append(path)
      case S_IFLNK:
        // A link to a file is that file; a link to a directory is not followed.
        var target = stat()
        if stat(path, &target) == 0, target.st_mode & S_IFMT == S_IFREG {
          expansion.files.append(path)
        }
      default: continue
      }
    }
  }
}

/// Counts of what a run over many files found: per status, per generation, per finding code.
struct RunSummary {
  /// The statuses in the order they are printed, each with its count.
  private(set) var statuses: [(name: String, count: Int)]
  private(set) var generations: [String: Int] = [:]
  private(set) var codes: [String: Int] = [:]
  /// What the codes are: "findings" (validate) or "changes" (repair).
  let codesLabel: String

  /// A summary whose statuses are `statusNames`, in that order.
  init(statusNames: [String], codesLabel: String) {
    statuses = statusNames.map { ($0, 0) }
    self.codesLabel = codesLabel
  }

  /// Counts one file.
  mutating func add(status: String, generation: String?, codes fileCodes: [String]) {
    if let index = statuses.firstIndex(where: { $0.name == status }) {
      statuses[index].count += 1
    }
    if let generation { generations[generation, default: 0] += 1 }
    for code in fileCodes { codes[code, default: 0] += 1 }
  }

  private var fileCount: Int { statuses.reduce(0) { $0 + $1.count } }

  private static func listed(_ counts: [String: Int]) -> String {
    counts.isEmpty
      ? "none"
      : counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
  }

  /// The summary as text lines.
  var text: String {
    let files = fileCount == 1 ? "1 file" : "\(fileCount) files"
    return "summary: \(files): "
      + statuses.map { "\($0.count) \($0.name)" }.joined(separator: ", ") + "\n"
      + "  generations: \(Self.listed(generations))\n"
      + "  \(codesLabel): \(Self.listed(codes))\n"
  }

  /// The summary as a JSON object at nesting `level`.
  func json(level: Int) -> String {
    func counts(_ pairs: [(String, Int)]) -> String {
      var object = JSONObject()
      for (name, count) in pairs { object.add(name, String(count)) }
      return pairs.isEmpty ? "{}" : object.rendered(level: level + 1)
    }
    var object = JSONObject()
    object.add("files", String(fileCount))
    object.add("statuses", counts(statuses.map { ($0.name, $0.count) }))
    object.add(
      "generations", counts(generations.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }))
    object.add(codesLabel, counts(codes.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }))
    return object.rendered(level: level)
  }
}

import Foundation
import PropertyList
import ResumeData
import ResumeDataBatch

/// Reading a resume blob, and the options every resume-data command shares.
enum ResumeInput {
  /// Decodes a blob read from `path`, a malformed one as an error located in that file.
  static func decode(_ input: Data, file path: String) throws(CommandError) -> ResumeData {
    do {
      return try ResumeData(decoding: input)
    } catch {
      throw .operation(error, file: path)
    }
  }

  /// A `--target` value, or a usage error listing every name accepted.
  static func target(_ name: String) throws(CommandError) -> RepairTarget {
    guard let target = RepairTarget(name: name) else {
      throw .usage(
        "unknown target '\(name)'; valid targets: "
          + RepairTarget.names.joined(separator: ", "))
    }
    return target
  }
}

extension Arguments {
  /// The one FILE (or `-`) argument of `command`, read and decoded as a resume blob.
  func readResumeData(for command: String, streams: Streams) throws(CommandError) -> (
    path: String, resume: ResumeData
  ) {
    let (path, input) = try readSingleFile(for: command, streams: streams)
    return (path, try ResumeInput.decode(input, file: path))
  }

  /// What `--to GEN`, `--format` and `--info-version` ask a conversion for (`convert`, `batch`).
  func conversion(to name: String) throws(CommandError) -> (
    generation: ResumeDataGeneration, format: PropertyListFormat?, infoVersion: Int?
  ) {
    guard let generation = ResumeDataGeneration(rawValue: name) else {
      let names = ResumeDataGeneration.allCases.map(\.rawValue).joined(separator: ", ")
      throw .usage("--to must be one of \(names), not '\(name)'")
    }
    let format = try value("--format").map { (name) throws(CommandError) in
      guard let format = PropertyListFormat(rawValue: name) else {
        throw .usage("--format must be xml or binary, not '\(name)'")
      }
      return format
    }
    let infoVersion = try value("--info-version").map { (text) throws(CommandError) in
      guard let version = Int(text), version >= 0 else {
        throw .usage("--info-version must be a whole number, not '\(text)'")
      }
      return version
    }
    return (generation, format, infoVersion)
  }

  /// `--temp-dir`, if given: where a conversion or a repair puts a blob's partial file: a path for the
  /// system that will resume it, which need not be there on this one.
  var temporaryDirectory: URL? {
    value("--temp-dir").map { URL(fileURLWithPath: $0, isDirectory: true) }
  }

  /// `--temp-dir` for the commands that look partial files up on this machine (`inspect`,
  /// `validate`): it must be a directory that is there, or a mistyped one would make every
  /// partial file "missing" (exit 66 instead).
  func existingTemporaryDirectory() throws(CommandError) -> URL? {
    guard let path = value("--temp-dir") else { return nil }
    switch Files.isDirectory(path) {
    case true: return URL(fileURLWithPath: path, isDirectory: true)
    case false: throw CommandError(.unreadableInput, "not a directory (--temp-dir)", file: path)
    case nil: throw CommandError(.unreadableInput, "no such directory (--temp-dir)", file: path)
    }
  }
}

extension CommandError {
  /// An error of decoding, changing or encoding the blob in `file`: an edit's invalid argument is a
  /// usage error (64), an operation the blob or target does not allow a failure (1), anything
  /// else malformed input (65).
  static func operation(_ error: any Error, file: String) -> CommandError {
    let failure = OperationFailure(error)
    switch failure.kind {
    case .usage:
      return .usage(failure.message)
    case .failure:
      return CommandError(.failure, failure.message, file: file, location: failure.location)
    case .malformed:
      return CommandError(.malformedInput, failure.message, file: file, location: failure.location)
    }
  }
}

import Foundation
import PropertyList
import ResumeData
import ResumeDataBatch

/// Reading a resume blob, and the options every resume-data command shares.
enum ResumeInput {
  /// `--input-form`, which every command that reads a blob takes.
  static let inputFormOption = OptionSpec.option(
    "--input-form", value: .choice(CapturedForm.allCases.map(\.rawValue)))

  /// The form `--input-form` names, nil (tell it from the input) without it.
  static func form(_ parsed: Arguments) throws(CommandError) -> CapturedForm? {
    try parsed.value("--input-form").map { (name) throws(CommandError) in
      guard let form = CapturedForm(rawValue: name) else {
        throw .usage(
          "--input-form must be one of "
            + CapturedForm.allCases.map(\.rawValue).joined(separator: ", ") + ", not '\(name)'")
      }
      return form
    }
  }

  /// What a command that writes a blob reports of how it read it: nothing for the blob's own
  /// bytes, `recovered-from-description` for a description of the resume dictionary, else an
  /// `input-form` finding naming the text it was read from.
  static func findings(_ captured: CapturedBlob) -> [Finding] {
    if captured.form == .raw { return [] }
    if !captured.findings.isEmpty { return captured.findings }
    return [
      Finding(
        "input-form", .info,
        "read as \(captured.detail); the blob written is its own bytes")
    ]
  }

  /// Decodes a blob read from `path`, a malformed one as an error located in that file.
  static func decode(_ input: Data, file path: String) throws(CommandError) -> ResumeData {
    try decode(input, file: path, form: .raw).resume
  }

  /// Reads a blob from `path`'s bytes in any captured form (`form`, or the one the input shows),
  /// then decodes it. A blob read from text that does not decode says so: its error's location is
  /// in the decoded bytes, not in the file.
  static func decode(_ input: Data, file path: String, form: CapturedForm?) throws(CommandError)
    -> (resume: ResumeData, captured: CapturedBlob)
  {
    let captured: CapturedBlob
    do {
      captured = try CapturedBlob.read(input, as: form)
    } catch {
      throw .operation(error, file: path)
    }
    do {
      return (try ResumeData(decoding: captured.bytes), captured)
    } catch {
      var failure = CommandError.operation(error, file: path)
      if captured.form != .raw {
        let location = failure.location == .none ? "" : "\(failure.location): "
        failure.message =
          "read as \(captured.detail), the blob does not read: " + location
          + failure.message
        failure.location = .none
      }
      throw failure
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
  /// The one FILE (or `-`) argument of `command`, read and decoded as a resume blob in the
  /// form `--input-form` names, or the one it shows.
  func readResumeData(for command: String, streams: Streams) throws(CommandError) -> (
    path: String, resume: ResumeData, captured: CapturedBlob
  ) {
    let (path, input) = try readSingleFile(for: command, streams: streams)
    let (resume, captured) = try ResumeInput.decode(
      input, file: path, form: try ResumeInput.form(self))
    return (path, resume, captured)
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

import Foundation
import PropertyList
import ResumeData

/// What `inspect` reads: a blob in any captured form, or one inside a JSON document or a
/// property list (`--at KEYPATH`, or the only one there); or, for a container of several, their
/// list, printed instead.
struct InspectedInput {
  /// The blob.
  var resume: ResumeData
  /// How its bytes were read.
  var captured: CapturedBlob
  /// The container it was found in, if any.
  var containerFormat: BlobContainerFormat?
  /// Where in the container.
  var keyPath: ContainerKeyPath?

  /// The `input` row of the text report: nil for a blob read as its own bytes from a file.
  var described: String? {
    if let keyPath, let containerFormat {
      return (captured.form == .raw ? "data" : captured.detail)
        + " at \(keyPath) of \(Self.article(containerFormat))"
    }
    return captured.form == .raw ? nil : captured.detail
  }

  static func article(_ format: BlobContainerFormat) -> String {
    switch format {
    case .json: "a JSON document"
    case .xmlPlist: "an XML property list"
    case .binaryPlist: "a binary property list"
    case .keyedArchive: "a keyed archive"
    }
  }

  /// Reads the FILE of `inspect`; nil when it printed a container's list of blobs instead.
  static func read(_ parsed: Arguments, streams: Streams) throws(CommandError) -> InspectedInput? {
    let form = try ResumeInput.form(parsed)
    let (path, input) = try parsed.readSingleFile(for: "inspect", streams: streams)
    if let at = parsed.value("--at") {
      let keyPath: ContainerKeyPath
      do {
        keyPath = try ContainerKeyPath(parsing: at)
      } catch {
        throw .usage("\(error)")
      }
      guard let container = try scan(input, file: path) else {
        throw CommandError(
          .malformedInput,
          "--at looks inside a JSON document or a property list, and this is neither", file: path)
      }
      guard let found = container.blob(at: keyPath) else {
        let paths = container.blobs.map(\.keyPath.description)
        throw CommandError(
          .failure,
          "no resume blob at \(keyPath) "
            + (paths.isEmpty
              ? "(the \(container.format.rawValue) holds none)"
              : "(the blobs are at \(paths.joined(separator: ", ")))"),
          file: path)
      }
      return try open(found, in: container, file: path)
    }
    do {
      let (resume, captured) = try ResumeInput.decode(input, file: path, form: form)
      return InspectedInput(resume: resume, captured: captured)
    } catch {
      // Not a blob: perhaps a document of blobs.
      guard form == nil, let container = try scan(input, file: path) else { throw error }
      switch container.blobs.count {
      case 0:
        // Android's pause state and the like are named by the error itself.
        if container.format == .json, error.message.hasPrefix("a JSON document, not a blob") {
          throw CommandError(
            .malformedInput,
            "a JSON document that holds no resume blob (no value of it reads as one)",
            file: path)
        }
        throw error
      case 1:
        return try open(container.blobs[0], in: container, file: path)
      default:
        streams.print(
          parsed.has("--json")
            ? listJSON(container) : listText(container, file: path))
        return nil
      }
    }
  }

  private static func scan(_ input: Data, file path: String) throws(CommandError) -> BlobContainer?
  {
    do {
      return try BlobContainer.scan(input)
    } catch let error as PropertyListError {
      throw .malformed(error, file: path)
    } catch {
      throw CommandError(.failure, "\(error)", file: path)
    }
  }

  private static func open(_ found: ContainedBlob, in container: BlobContainer, file path: String)
    throws(CommandError) -> InspectedInput
  {
    switch found.result {
    case .success(let captured):
      do {
        return InspectedInput(
          resume: try ResumeData(decoding: captured.bytes), captured: captured,
          containerFormat: container.format, keyPath: found.keyPath)
      } catch {
        throw .operation(error, file: path)
      }
    case .failure(let error):
      var failure = CommandError.operation(error, file: path)
      failure.message = "at \(found.keyPath): " + failure.message
      throw failure
    }
  }

  /// One line a blob: key path, form, generation, URL and bytes, or the error.
  static func listText(_ container: BlobContainer, file path: String) -> String {
    var lines = [
      CommandError.oneLine(
        "\(path): \(article(container.format)) holding \(container.blobs.count) resume blobs; inspect one with --at KEYPATH:"
      )
    ]
    let width = container.blobs.map(\.keyPath.description.count).max() ?? 0
    for blob in container.blobs {
      let keyPath = blob.keyPath.description.padding(toLength: width, withPad: " ", startingAt: 0)
      switch blob.result {
      case .success(let captured):
        let resume = try? ResumeData(decoding: captured.bytes)
        lines.append(
          CommandError.oneLine(
            "  \(keyPath)  \(captured.form.rawValue)  \(resume?.generation.rawValue ?? "-")  \(resume?.downloadURL ?? "-")  \(resume?.bytesReceived.map { "\($0) bytes" } ?? "-")"
          ))
      case .failure(let error):
        lines.append(CommandError.oneLine("  \(keyPath)  error \(error.code): \(error)"))
      }
    }
    return lines.joined(separator: "\n") + "\n"
  }

  static func listJSON(_ container: BlobContainer) -> String {
    var object = JSONObject.document()
    object.add("in", string: container.format.rawValue)
    object.add(
      "blobs",
      JSON.array(
        container.blobs.map { blob in
          var item = JSONObject()
          item.add("keyPath", string: blob.keyPath.description)
          switch blob.result {
          case .success(let captured):
            let resume = try? ResumeData(decoding: captured.bytes)
            item.add("form", string: captured.form.rawValue)
            item.add("detail", string: captured.detail)
            item.add("generation", string: resume?.generation.rawValue)
            item.add("downloadURL", string: resume?.downloadURL)
            item.add("bytesReceived", resume?.bytesReceived.map { String($0) } ?? "null")
            item.add("error", "null")
          case .failure(let error):
            item.add("form", "null")
            item.add("detail", "null")
            item.add("generation", "null")
            item.add("downloadURL", "null")
            item.add("bytesReceived", "null")
            var failure = JSONObject()
            failure.add("code", string: error.code.rawValue)
            failure.add("message", string: error.description)
            item.add("error", failure.rendered(level: 3))
          }
          return item.rendered(level: 2)
        }, level: 1))
    return object.rendered() + "\n"
  }
}

import Foundation
import KeyedArchive
import PropertyList
import ResumeData

/// A partial file and its JSON sidecar (`FILE.part` and `FILE.part.json`), the form Range-based
/// downloaders keep (the model downloaders' `.incomplete` and its ETag): what `export` writes and
/// `download --partial` continues from.
///
/// The sidecar: `{"schemaVersion": 1, "url", "originalURL", "bytes", "entityTag",
/// "lastModified", "validator", "headers": {name: value}, "partialFile"}`, where `validator` is what
/// to send as If-Range (a strong ETag, else Last-Modified) and `partialFile` the partial file's
/// name, beside the sidecar.
struct PartialPair: Equatable {
  /// The URL to continue from.
  var url: String
  /// The URL the download first asked for.
  var originalURL: String?
  /// The bytes of the partial file the sidecar vouches for.
  var bytes: Int64?
  /// The ETag the bytes belong to.
  var entityTag: String?
  /// The Last-Modified date they belong to.
  var lastModified: String?
  /// The request's header fields.
  var headers: [(name: String, value: String)]
  /// The partial file's name.
  var partialFile: String

  static func == (lhs: PartialPair, rhs: PartialPair) -> Bool {
    lhs.url == rhs.url && lhs.originalURL == rhs.originalURL && lhs.bytes == rhs.bytes
      && lhs.entityTag == rhs.entityTag && lhs.lastModified == rhs.lastModified
      && lhs.headers.elementsEqual(rhs.headers) { $0 == $1 } && lhs.partialFile == rhs.partialFile
  }

  /// What to send as If-Range: a strong ETag, else Last-Modified.
  var validator: String? {
    if let tag = entityTag, !tag.hasPrefix("W/") { return tag }
    return lastModified
  }

  /// The sidecar of a partial file: its path with `.json` added.
  static func sidecarPath(of partial: String) -> String { partial + ".json" }

  /// The sidecar's JSON.
  var json: String {
    var object = JSONObject.document()
    object.add("url", string: url)
    object.add("originalURL", string: originalURL)
    object.add("bytes", bytes.map { String($0) } ?? "null")
    object.add("entityTag", string: entityTag)
    object.add("lastModified", string: lastModified)
    object.add("validator", string: validator)
    let fields = headers.map { "\(JSON.string($0.name)): \(JSON.string($0.value))" }
    object.add("headers", "{" + fields.joined(separator: ", ") + "}")
    object.add("partialFile", string: partialFile)
    return object.rendered() + "\n"
  }

  /// Reads a sidecar; a malformed one exits 65 naming what is wrong.
  static func read(sidecar path: String) throws(CommandError) -> PartialPair {
    let data = try Files.read(path, limit: 1 << 20)
    let object: [String: Any]
    do {
      guard let parsed = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
        throw CommandError(.malformedInput, "the sidecar is not a JSON object", file: path)
      }
      object = parsed
    } catch let error as CommandError {
      throw error
    } catch {
      throw CommandError(
        .malformedInput, "the sidecar is not JSON: \(error.localizedDescription)", file: path)
    }
    func string(_ key: String, required: Bool = false) throws(CommandError) -> String? {
      switch object[key] {
      case let value as String: return value
      case nil, is NSNull:
        if required { throw CommandError(.malformedInput, "\(key): missing", file: path) }
        return nil
      default: throw CommandError(.malformedInput, "\(key): not a string", file: path)
      }
    }
    guard let url = try string("url", required: true),
      let partialFile = try string("partialFile", required: true)
    else { throw CommandError(.malformedInput, "incomplete", file: path) }
    guard ResumeData.isSafeBareName(partialFile) else {
      throw CommandError(
        .malformedInput, "partialFile: \(String(reflecting: partialFile)) is not a bare file name",
        file: path)
    }
    var bytes: Int64?
    switch object["bytes"] {
    case nil, is NSNull: bytes = nil
    case let number as NSNumber:
      guard let value = Int64(exactly: number.doubleValue), value >= 0 else {
        throw CommandError(.malformedInput, "bytes: not a byte count", file: path)
      }
      bytes = value
    default: throw CommandError(.malformedInput, "bytes: not a number", file: path)
    }
    var headers = [(name: String, value: String)]()
    switch object["headers"] {
    case nil, is NSNull: break
    case let fields as [String: Any]:
      for name in fields.keys.sorted() {
        guard let value = fields[name] as? String else {
          throw CommandError(.malformedInput, "headers.\(name): not a string", file: path)
        }
        if let problem = URLRequestFields.Header(name, value).problem {
          throw CommandError(.malformedInput, "headers.\(name): \(problem)", file: path)
        }
        headers.append((name, value))
      }
    default: throw CommandError(.malformedInput, "headers: not an object", file: path)
    }
    return PartialPair(
      url: url, originalURL: try string("originalURL"), bytes: bytes,
      entityTag: try string("entityTag"), lastModified: try string("lastModified"),
      headers: headers, partialFile: partialFile)
  }
}

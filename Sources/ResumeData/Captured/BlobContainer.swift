import KeyedArchive
import PortableFoundation
import PropertyList

/// Where a value is inside a JSON document or a property list: keys and indexes from the top,
/// written `tasks[2].resumeData` (a key that is not a plain name in brackets and quotes,
/// `["a.b"]`; the top itself `$`).
public struct ContainerKeyPath: Sendable, Hashable, CustomStringConvertible {
  /// One step down.
  public enum Component: Sendable, Hashable {
    /// A dictionary's (object's) key.
    case key(String)
    /// An array's index, from 0.
    case index(Int)
  }

  /// The steps from the top.
  public var components: [Component]

  /// A path of these steps.
  public init(_ components: [Component]) {
    self.components = components
  }

  /// Reads a path as `--at` takes it: `tasks[2].resumeData`, `$.data`, `$`, `["a.b"][0]`,
  /// `['a.b']`.
  ///
  /// - Throws: ``ResumeDataError`` `.invalidEdit` saying where the text does not read.
  public init(parsing text: String) throws {
    let characters = Array(text)
    var index = 0
    var components = [Component]()
    func fail(_ message: String) -> ResumeDataError {
      ResumeDataError(
        .invalidEdit,
        "the key path \(text.debugDescription) does not read at \(index + 1): \(message)",
        at: "")
    }
    if characters.first == "$" { index = 1 }
    var expectsName = index == 0
    while index < characters.count {
      let character = characters[index]
      if character == "." {
        index += 1
        expectsName = true
        continue
      }
      if character == "[" {
        index += 1
        guard index < characters.count else { throw fail("'[' without ']'") }
        if characters[index] == "\"" || characters[index] == "'" {
          let quote = characters[index]
          index += 1
          var key = ""
          while index < characters.count, characters[index] != quote {
            if characters[index] == "\\", index + 1 < characters.count { index += 1 }
            key.append(characters[index])
            index += 1
          }
          guard index + 1 < characters.count, characters[index + 1] == "]" else {
            throw fail("a quoted key without its closing quote and ']'")
          }
          index += 2
          components.append(.key(key))
        } else {
          var digits = ""
          while index < characters.count, characters[index].isASCII, characters[index].isNumber {
            digits.append(characters[index])
            index += 1
          }
          guard !digits.isEmpty, let number = Int(digits), index < characters.count,
            characters[index] == "]"
          else { throw fail("an index is a whole number in brackets, as [2]") }
          index += 1
          components.append(.index(number))
        }
        expectsName = false
        continue
      }
      guard expectsName else {
        throw fail("expected '.' or '[' before \(String(character).debugDescription)")
      }
      var name = ""
      while index < characters.count, characters[index] != ".", characters[index] != "[" {
        name.append(characters[index])
        index += 1
      }
      components.append(.key(name))
      expectsName = false
    }
    if expectsName && index > 1 { throw fail("a '.' without a key after it") }
    self.components = components
  }

  /// The path as `inspect` lists it, `$` for the top.
  public var description: String {
    guard !components.isEmpty else { return "$" }
    var out = ""
    for component in components {
      switch component {
      case .index(let index): out += "[\(index)]"
      case .key(let key):
        if Self.isPlainName(key) {
          out += out.isEmpty ? key : "." + key
        } else {
          var quoted = ""
          for character in key {
            if character == "\\" || character == "\"" { quoted.append("\\") }
            quoted.append(character)
          }
          out += "[\"" + quoted + "\"]"
        }
      }
    }
    return out
  }

  static func isPlainName(_ key: String) -> Bool {
    guard let first = key.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
    return key.unicodeScalars.allSatisfy {
      ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
        || $0 == "_" || $0 == "$" || $0 == "-"
    }
  }

  /// The last key on the path, if any.
  var lastKey: String? {
    for component in components.reversed() {
      if case .key(let key) = component { return key }
    }
    return nil
  }
}

/// The kinds of document that hold resume blobs.
public enum BlobContainerFormat: String, Sendable, Hashable, CaseIterable {
  /// A JSON document (background_downloader's and Expo's pause state, an app's own store).
  case json
  /// An XML property list (UserDefaults' files, an app's own).
  case xmlPlist = "xml-plist"
  /// A binary property list (Tiercel's task list from `PropertyListEncoder`, UserDefaults').
  case binaryPlist = "binary-plist"
  /// An NSKeyedArchiver archive of an app's own objects: key paths run from its root object
  /// through dictionaries' keys and instances' fields.
  case keyedArchive = "keyed-archive"
}

/// A blob found inside a container, or a value there that should be one and does not read.
public struct ContainedBlob: Sendable {
  /// Where it is.
  public var keyPath: ContainerKeyPath
  /// The blob, or why the value under a resume-data key (or an elided description) is not one.
  public var result: Result<CapturedBlob, ResumeDataError>
}

/// A JSON document or a property list that holds resume blobs: as data, or as base64, hex or
/// description text in strings.
public struct BlobContainer: Sendable {
  /// The kind of document.
  public var format: BlobContainerFormat
  /// The blobs, in the document's order (keys in the order written).
  public var blobs: [ContainedBlob]

  /// Most values a scan looks at, so that a huge document cannot make it slow.
  public static let maximumValues = 1_000_000

  /// Looks for resume blobs in a JSON document or a property list.
  ///
  /// A value is taken for a blob when it reads as resume data (`ResumeData(decoding:)`) in any
  /// captured form; a value under a key whose name holds "resume" that looks like a blob (its
  /// bytes, or text of a captured form) is listed with its error when it does not read, and so
  /// is an elided iOS 13 description anywhere.
  ///
  /// - Returns: nil when the input is neither JSON nor a property list (a blob itself is a
  ///   property list, whose request archives are no resume blobs: check it first).
  /// - Throws: `PropertyListError` for JSON that does not read (with its line and column).
  public static func scan(_ input: Data, limits: KeyedArchiveLimits = .default) throws
    -> BlobContainer?
  {
    let text = CapturedText(input)
    let root: ContainerNode
    let format: BlobContainerFormat
    if text.isText, text.looksLikeJSON {
      root = try ContainerJSON.read(input)
      format = .json
    } else if CapturedBlob.looksLikeBlob(input),
      let (value, plistFormat) = try? PropertyListValue.decode(input, limits: limits.propertyList)
    {
      if value["$archiver"] != nil {
        // An app's archived objects, walked by their keys and fields from the root object (the
        // raw `$objects` when the archive does not decode).
        format = .keyedArchive
        if let archive = try? KeyedArchive(propertyList: value, format: plistFormat),
          let decoded = try? archive.decodeRoot(limits: limits)
        {
          root = ContainerNode(decoded)
        } else {
          root = ContainerNode(value)
        }
      } else {
        root = ContainerNode(value)
        format = plistFormat == .xml ? .xmlPlist : .binaryPlist
      }
    } else {
      return nil
    }
    var scanner = Scanner(limits: limits)
    scanner.walk(root, path: [])
    return BlobContainer(format: format, blobs: scanner.found)
  }

  /// The blob at a key path, if one was found there.
  public func blob(at path: ContainerKeyPath) -> ContainedBlob? {
    blobs.first { $0.keyPath == path }
  }

  private struct Scanner {
    let limits: KeyedArchiveLimits
    var found = [ContainedBlob]()
    var visited = 0

    mutating func walk(_ node: ContainerNode, path: [ContainerKeyPath.Component]) {
      visited += 1
      guard visited <= BlobContainer.maximumValues, path.count <= 512 else { return }
      switch node {
      case .object(let members):
        for (key, value) in members { walk(value, path: path + [.key(key)]) }
      case .array(let elements):
        for (index, value) in elements.enumerated() { walk(value, path: path + [.index(index)]) }
      case .string(let string):
        consider(Data(string.utf8), path: ContainerKeyPath(path), isData: false)
      case .data(let data):
        consider(data, path: ContainerKeyPath(path), isData: true)
      case .other:
        break
      }
    }

    mutating func consider(_ bytes: Data, path: ContainerKeyPath, isData: Bool) {
      let named = path.lastKey.map { $0.lowercased().contains("resume") } ?? false
      let captured: CapturedBlob
      if isData && CapturedBlob.looksLikeBlob(bytes) {
        captured = CapturedBlob(bytes: bytes, form: .raw, detail: "data in the property list")
      } else {
        guard bytes.count >= 12, let first = CapturedText(bytes).first,
          CapturedText.base64Value(first) != nil || first == UInt8(ascii: "<")
            || first == UInt8(ascii: "{")
        else { return }
        do {
          captured = try CapturedBlob.read(bytes)
        } catch let error as ResumeDataError {
          if error.code == .elidedDescription || (named && error.code != .notABlob) {
            found.append(ContainedBlob(keyPath: path, result: .failure(error)))
          }
          return
        } catch {
          return
        }
        guard captured.form != .raw else { return }
      }
      do {
        _ = try ResumeData(decoding: captured.bytes, limits: limits)
        found.append(ContainedBlob(keyPath: path, result: .success(captured)))
      } catch let error as ResumeDataError {
        if named { found.append(ContainedBlob(keyPath: path, result: .failure(error))) }
      } catch {
        return
      }
    }
  }
}

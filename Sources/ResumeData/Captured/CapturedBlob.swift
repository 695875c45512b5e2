import KeyedArchive
import PortableFoundation
import PropertyList

/// The forms in which a resume blob is kept and pasted, besides its own bytes.
public enum CapturedForm: String, Sendable, Hashable, CaseIterable {
  /// The blob's own bytes: a binary or XML property list, or a masked Network.framework archive.
  case raw
  /// Base64 text: the standard or URL-safe alphabet, padded or not, on one line or wrapped, after
  /// a `data:…;base64,` prefix or not (`resumeData.base64EncodedString()`, what most apps store).
  case base64
  /// Hex text: `xxd -p`'s lines, one run of digits, `0x…`, or bytes and groups apart by spaces.
  case hex
  /// What Foundation prints: the description of the `NSData` (`<62706c69 73743030 …>`, or iOS
  /// 13's `{length = 412, bytes = 0x…}` when it shows every byte), or the description of the
  /// resume dictionary itself (`{ NSURLSessionDownloadURL = "…"; … }`), recovered into a blob.
  case description
}

/// A resume blob read from what was captured: its bytes, and how they were read.
///
/// ``read(_:as:generation:)`` tells the forms apart from the text itself, and only takes a text
/// form when what it decodes to starts as a resume blob does (a property list or a masked
/// Network.framework archive): a blob's own bytes are always read as they are.
public struct CapturedBlob: Sendable, Hashable {
  /// The blob's bytes.
  public var bytes: Data
  /// The form they were read from.
  public var form: CapturedForm
  /// How, in words: "base64 text (URL-safe, on 3 lines)", "the NSData description of a log".
  public var detail: String
  /// What recovering it chose, for a description of the resume dictionary
  /// (`recovered-from-description`); empty for the other forms, whose bytes are the blob's own.
  public var findings: [Finding]

  /// Creates a captured blob.
  public init(bytes: Data, form: CapturedForm, detail: String, findings: [Finding] = []) {
    self.bytes = bytes
    self.form = form
    self.detail = detail
    self.findings = findings
  }

  /// Reads a blob from what was captured, in whichever form it is (or in `form`, when given).
  ///
  /// - Parameters:
  ///   - input: the bytes of a file or of standard input, or the text of a stored string.
  ///   - form: the form to read it in; nil tells it from the input.
  ///   - generation: for a description of the resume dictionary, the generation to write it as;
  ///     nil picks it from its keys (see `recovered-from-description` in docs/findings.md).
  /// - Throws: ``ResumeDataError``: `.capturedText` for text of a form that does not decode (with
  ///   the line and column), `.elidedDescription` for a description that leaves bytes out,
  ///   `.notABlob` for a value that is not a blob at all (a number, a file path, JSON), with what
  ///   it looks like instead.
  public static func read(
    _ input: Data, as form: CapturedForm? = nil, generation: ResumeDataGeneration? = nil
  ) throws -> CapturedBlob {
    // A blob's own bytes are told by their first bytes, before anything looks at the rest.
    if form == nil, looksLikeBlob(input) {
      return CapturedBlob(bytes: input, form: .raw, detail: "the blob's own bytes")
    }
    let text = CapturedText(input)
    if let form {
      return try read(text, as: form, generation: generation)
    }
    if !text.isText {
      return CapturedBlob(bytes: input, form: .raw, detail: "the blob's own bytes")
    }
    guard let first = text.first else {
      return CapturedBlob(bytes: input, form: .raw, detail: "the blob's own bytes")
    }
    if let elided = text.elidedDescription() { throw elided }
    if text.startsWith("{length = ") || text.startsWith("{length=") {
      return try read(text, as: .description, generation: generation)
    }
    if let debuggerSize = text.debuggerSize() { throw debuggerSize }
    switch first {
    case UInt8(ascii: "<"):
      // `<…>` that is not XML (looksLikeBlob took those): NSData's description.
      return try read(text, as: .description, generation: generation)
    case UInt8(ascii: "{"), UInt8(ascii: "("):
      if text.looksLikeJSON { throw text.notABlob() }
      return try read(text, as: .description, generation: generation)
    default:
      break
    }
    // Hex and base64 overlap (`cafe` is both): each is taken only when it decodes to what starts
    // a blob, hex first (its alphabet is the narrower).
    if let hex = try? text.hex(), looksLikeBlob(hex.bytes) {
      return CapturedBlob(bytes: hex.bytes, form: .hex, detail: hex.detail)
    }
    if let base64 = try? text.base64(), looksLikeBlob(base64.bytes) {
      return CapturedBlob(bytes: base64.bytes, form: .base64, detail: base64.detail)
    }
    if text.couldBeEncoded {
      // Text of an encoding's alphabet whose bytes are no blob: said so, or what they decode to
      // would be reported as a property list that does not read.
      throw text.notABlob()
    }
    throw text.notABlob()
  }

  private static func read(
    _ text: CapturedText, as form: CapturedForm, generation: ResumeDataGeneration?
  ) throws -> CapturedBlob {
    switch form {
    case .raw:
      return CapturedBlob(bytes: text.bytes, form: .raw, detail: "the blob's own bytes")
    case .base64:
      let decoded = try text.base64()
      return CapturedBlob(bytes: decoded.bytes, form: .base64, detail: decoded.detail)
    case .hex:
      let decoded = try text.hex()
      return CapturedBlob(bytes: decoded.bytes, form: .hex, detail: decoded.detail)
    case .description:
      if let elided = text.elidedDescription() { throw elided }
      if text.startsWith("{length = ") || text.startsWith("{length=") {
        let decoded = try text.modernDataDescription()
        return CapturedBlob(bytes: decoded.bytes, form: .description, detail: decoded.detail)
      }
      let value: PropertyListValue
      do {
        value = try OpenStepPropertyListReader().read(text.bytes)
      } catch let error as PropertyListError {
        throw ResumeDataError(
          .capturedText, "not a description Foundation prints: \(error.message)", at: "",
          propertyListError: PropertyListError(
            error.code, "not a description Foundation prints: \(error.message)",
            at: error.location))
      }
      switch value {
      case .data(let bytes):
        return CapturedBlob(
          bytes: bytes, form: .description,
          detail: "the description of NSData (<…>, as NSLog and the debugger print it)")
      case .dictionary(let dictionary):
        return try DescriptionRecovery.recover(dictionary, generation: generation)
      default:
        throw text.notABlob(
          "an OpenStep \(value.typeName == "array" ? "array" : "string"), not the description of a blob or of a resume dictionary"
        )
      }
    }
  }

  /// Whether bytes start as a resume blob does: a binary or XML property list, or a masked
  /// Network.framework archive.
  public static func looksLikeBlob(_ bytes: Data) -> Bool {
    if bytes.starts(with: Array("bplist0".utf8)) || NetworkFrameworkMask.isMasked(bytes) {
      return true
    }
    if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) {
      // UTF-16 XML: `<` as its first character.
      return bytes.dropFirst(2).prefix(2).contains(UInt8(ascii: "<"))
    }
    var rest = bytes[...]
    if rest.starts(with: [0xEF, 0xBB, 0xBF]) { rest = rest.dropFirst(3) }
    let text = rest.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
    return text.starts(with: Array("<?xml".utf8)) || text.starts(with: Array("<!DOCTYPE".utf8))
      || text.starts(with: Array("<plist".utf8)) || text.starts(with: Array("<!--".utf8))
  }
}

extension ResumeDataError.Code {
  /// Text of a captured form (base64, hex, a description) that does not decode; the
  /// `propertyListError` says where.
  public static let capturedText = ResumeDataError.Code(rawValue: "captured-text")
  /// A description that shows only some of the blob's bytes (iOS 13's `{length = N, bytes = 0x…
  /// … }`): the blob cannot be recovered from it.
  public static let elidedDescription = ResumeDataError.Code(rawValue: "elided-description")
  /// A value that is not a resume blob in any form (a number, a file path, JSON).
  public static let notABlob = ResumeDataError.Code(rawValue: "not-a-blob")
}

extension ResumeData {
  /// Reads a resume blob from what was captured, in any form
  /// (``CapturedBlob/read(_:as:generation:)``): the blob's own bytes, base64 or hex text, or a
  /// description Foundation printed.
  ///
  /// - Returns: the blob, and how it was read.
  public static func decoding(
    captured input: Data, as form: CapturedForm? = nil, limits: KeyedArchiveLimits = .default
  ) throws -> (resume: ResumeData, captured: CapturedBlob) {
    let captured = try CapturedBlob.read(input, as: form)
    return (try ResumeData(decoding: captured.bytes, limits: limits), captured)
  }

  /// ``forURLSession(_:partialFile:limits:)`` for a blob kept as text: base64 (what
  /// `resumeData.base64EncodedString()` gives, standard or URL-safe, wrapped or not), hex, or a
  /// description Foundation printed. Text that is none of them, or does not decode, answers
  /// "start over" with the reason.
  public static func forURLSession(
    text: String, partialFile: PartialFileCheck, limits: KeyedArchiveLimits = .default
  ) -> URLSessionResume {
    guard let system = AppleSystem.running else {
      return forURLSession(Data(text.utf8), partialFile: partialFile, limits: limits)
    }
    return forURLSession(text: text, on: system, partialFile: partialFile, limits: limits)
  }

  /// ``forURLSession(text:partialFile:limits:)`` for a named system rather than the running one.
  public static func forURLSession(
    text: String, on system: AppleSystem, partialFile: PartialFileCheck,
    limits: KeyedArchiveLimits = .default
  ) -> URLSessionResume {
    forURLSession(captured: Data(text.utf8), on: system, partialFile: partialFile, limits: limits)
  }

  /// ``forURLSession(_:on:partialFile:limits:)`` for bytes that hold the blob in any captured form
  /// (its own bytes, or the text of base64, hex or a description, as a file or a database column
  /// keeps it): what ``CapturedBlob/read(_:as:generation:)`` finds in them is handed over, its
  /// findings first.
  public static func forURLSession(
    captured input: Data, on system: AppleSystem, partialFile: PartialFileCheck,
    limits: KeyedArchiveLimits = .default
  ) -> URLSessionResume {
    let captured: CapturedBlob
    do {
      captured = try CapturedBlob.read(input)
    } catch {
      let failure = error as? ResumeDataError
      let reason = Finding(
        failure?.code.rawValue ?? "unreadable", .error,
        "the text does not hold a resume blob: \(failure?.description ?? "\(error)")")
      return .startOver(reason: reason, findings: [reason])
    }
    switch forURLSession(captured.bytes, on: system, partialFile: partialFile, limits: limits) {
    case .resume(let data, let findings):
      return .resume(data, findings: captured.findings + findings)
    case .startOver(let reason, let findings):
      return .startOver(reason: reason, findings: captured.findings + findings)
    }
  }
}

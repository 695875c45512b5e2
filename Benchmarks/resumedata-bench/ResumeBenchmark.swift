import Foundation
import PropertyList
import ResumeData

/// Parses arguments that are only the shared timing options and `--help`.
///
/// - Returns: the options, or the exit status to return at once (0 after help, 64 on misuse).
func timingOptionsOnly(_ arguments: [String], usage: String, hint: String) -> Result<
  TimingOptions, ExitStatus
> {
  var options = TimingOptions()
  var remaining = arguments[...]
  while let argument = remaining.popFirst() {
    if let problem = options.parse(argument, &remaining) {
      if problem.isEmpty { continue }
      return .failure(ExitStatus(usageError(problem, hint: hint)))
    }
    guard argument == "-h" || argument == "--help" else {
      return .failure(ExitStatus(usageError("unexpected argument '\(argument)'", hint: hint)))
    }
    print(usage)
    return .failure(ExitStatus(0))
  }
  return .success(options)
}

/// A process exit status carried through `Result`.
struct ExitStatus: Error {
  /// The status.
  let code: Int32
  init(_ code: Int32) { self.code = code }
}

// MARK: - The resume benchmark

/// `resumedata-bench resume`: inspecting a keyed v5 blob, and repairing it and a v2 XML blob, ours
/// against the same work with Foundation.
enum ResumeBenchmark {
  static let usage = """
    USAGE: resumedata-bench resume [--rounds <n>] [--round-time <seconds>] [--only <side>]

    Times inspecting a keyed v5 resume blob (about 5 KB: the outer NSKeyedArchiver archive of the
    resume dictionary holding two ~2 KB request archives): ours decodes the outer archive, both
    request archives to typed fields (URL, method, headers, timeout) and diagnoses the blob
    (findings); Foundation decodes the outer archive with PropertyListSerialization and
    NSKeyedUnarchiver, and the two request archives with PropertyListSerialization (its
    NSKeyedUnarchiver cannot read Apple's request layout on Linux).

    Then times one record of a batch repair, for that blob (target ios13+) and for the same values
    as a v2 XML blob (target ios11.3+): ours decodes, repairs and encodes the repaired blob;
    Foundation decodes the blob (unarchiving the keyed one), reads both request archives and writes
    the dictionary back in the blob's form.

    OPTIONS:
    \(TimingOptions.help)
      -h, --help              Show help information.
    """

  static func run(_ arguments: [String]) -> Int32 {
    let hint = "resumedata-bench resume [--rounds <n>] [--round-time <seconds>]"
    let options: TimingOptions
    switch timingOptionsOnly(arguments, usage: usage, hint: hint) {
    case .success(let parsed): options = parsed
    case .failure(let status): return status.code
    }
    let blob: Data
    let v2Blob: Data
    do {
      let entries = try Inputs.resumeEntries(seed: 0x5E5)
      blob = try ResumeData(building: entries, as: .keyed, infoVersion: 5).encoded()
      // The same values as an iOS 9–10 blob: a plain XML dictionary with info version 2.
      v2Blob = try ResumeData(building: entries, as: .v2, format: .xml).encoded()
    } catch {
      printError("Error: could not build the blob: \(describe(error))")
      return 1
    }
    print("# resume: keyed v5 blob of \(size(blob.count)) with two request archives")

    func inspectOurs() throws -> (String?, Int, Int) {
      let resume = try ResumeData(decoding: blob)
      let current = resume.currentRequest
      let original = resume.originalRequest
      let findings = resume.findings()
      blackHole((current?.httpMethod, current?.timeoutInterval, original?.url, resume.entityTag))
      return (current?.url, (current?.headerFields.count ?? 0), findings.count)
    }
    func inspectTheirs() throws -> (String?, Int, Int) {
      let classes: [AnyClass] = [
        NSMutableDictionary.self, NSDictionary.self, NSString.self, NSNumber.self, NSData.self,
      ]
      let unarchiver = try NSKeyedUnarchiver(forReadingFrom: blob)
      unarchiver.decodingFailurePolicy = .setErrorAndReturn
      // CFNetwork's top key, spelled out: Linux Foundation's NSKeyedArchiveRootObjectKey is "root".
      let root =
        unarchiver.decodeObject(of: classes, forKey: "NSKeyedArchiveRootObjectKey")
        as? NSDictionary
      unarchiver.finishDecoding()
      var headerCount = 0
      var found = 0
      for key in [ResumeDataKey.currentRequest, ResumeDataKey.originalRequest] {
        guard let data = root?[key] as? Data else { continue }
        let plist = try PropertyListSerialization.propertyList(from: data, format: nil)
        guard let objects = (plist as? [String: Any])?["$objects"] as? [Any] else { continue }
        found += 1
        // The header dictionary's keys: the closest Foundation gets to typed fields.
        headerCount = max(
          headerCount,
          objects.compactMap { ($0 as? [String: Any])?["NS.keys"] as? [Any] }.map(\.count).max()
            ?? 0)
      }
      return (root?[ResumeDataKey.downloadURL] as? String, headerCount, found)
    }
    do {
      let mine = try inspectOurs()
      let theirs = try inspectTheirs()
      print(
        mine.1 == theirs.1 && theirs.2 == 2
          ? "✓ resume inspect: ours and Foundation read both requests and \(mine.1) headers"
          : "✗ resume inspect: ours \(mine) vs Foundation \(theirs)")
    } catch {
      print("✗ resume inspect: \(describe(error))")
    }
    compare(
      "keyed-v5", "inspect", rate: .perSecond, options: options, layer: "resume",
      ours: { blackHole(try inspectOurs()) }, foundation: { blackHole(try inspectTheirs()) })
    pipeline(
      "v2-xml", blob: v2Blob, target: .ios11Late, keyed: false, options: options)
    pipeline(
      "keyed-v5", blob: blob, target: .ios13Later, keyed: true, options: options)
    return 0
  }

  /// Times one record of a batch repair: decode, repair for `target`, encode the repaired blob.
  /// Foundation does the nearest it can: it decodes the blob (and, when keyed, unarchives the
  /// resume dictionary), reads both request archives' `$top` to check their layout (what the
  /// request-layout rule looks at), and writes the dictionary back in the blob's own form.
  static func pipeline(
    _ label: String, blob: Data, target: RepairTarget, keyed: Bool, options: TimingOptions
  ) {
    struct Refused: Error {}
    func ours() throws -> Data {
      let result = try ResumeData(decoding: blob).repaired(for: target)
      guard let repaired = result.blob else { throw Refused() }
      return try repaired.encoded()
    }
    func theirs() throws -> Int {
      var format = PropertyListSerialization.PropertyListFormat.xml
      guard let root = try foundationResumeDictionary(blob, keyed: keyed, format: &format) else {
        throw Refused()
      }
      for key in [ResumeDataKey.currentRequest, ResumeDataKey.originalRequest] {
        guard let data = root[key] as? Data else { continue }
        let plist = try PropertyListSerialization.propertyList(from: data, format: nil)
        blackHole(((plist as? [String: Any])?["$top"] as? [String: Any])?.keys.first)
      }
      if keyed {
        return try NSKeyedArchiver.archivedData(withRootObject: root, requiringSecureCoding: false)
          .count
      }
      return try PropertyListSerialization.data(fromPropertyList: root, format: format, options: 0)
        .count
    }
    do {
      let mine = try ours()
      let their = try theirs()
      print(
        "✓ \(label) repair for \(target.rawValue): ours \(size(mine.count))"
          + (mine == blob ? " (the input's bytes)" : "") + ", Foundation \(size(their))")
    } catch {
      print("✗ \(label) repair: \(describe(error))")
    }
    compare(
      label, "repair+encode", rate: .perSecond, options: options, layer: "resume",
      ours: { blackHole(try ours()) }, foundation: { blackHole(try theirs()) })
  }
}

/// The resume dictionary of a blob read with Foundation: unarchived with NSKeyedUnarchiver when
/// `keyed` (CFNetwork's top key spelled out: Linux Foundation's NSKeyedArchiveRootObjectKey is
/// "root"), else read with PropertyListSerialization, whose format is stored in `format`.
func foundationResumeDictionary(
  _ blob: Data, keyed: Bool, format: inout PropertyListSerialization.PropertyListFormat
) throws -> NSDictionary? {
  guard keyed else {
    return try PropertyListSerialization.propertyList(from: blob, format: &format) as? NSDictionary
  }
  let classes: [AnyClass] = [
    NSMutableDictionary.self, NSDictionary.self, NSString.self, NSNumber.self, NSData.self,
  ]
  let unarchiver = try NSKeyedUnarchiver(forReadingFrom: blob)
  unarchiver.decodingFailurePolicy = .setErrorAndReturn
  defer { unarchiver.finishDecoding() }
  return unarchiver.decodeObject(of: classes, forKey: "NSKeyedArchiveRootObjectKey")
    as? NSDictionary
}

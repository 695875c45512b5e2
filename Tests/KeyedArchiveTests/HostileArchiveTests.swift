import Foundation
import KeyedArchive
import PropertyList
import TestSupport
import Testing

// Hostile keyed archives (Fixtures/archive/hostile, made by make-hostile-archives.py): each is a valid
// property list whose archive structure is not, and each must be refused with an exact code and key
// path, without crashing, and in bounded time and memory.

/// Where a hostile archive must be refused.
enum RefusalStage: Sendable {
  /// By `KeyedArchive(decoding:)`, which validates the envelope, UIDs and classes.
  case reading
  /// By `decodeRoot()`, which follows references.
  case decoding
}

/// A hostile archive and the error it must be refused with.
struct HostileArchive: Sendable, CustomTestStringConvertible {
  /// The file name in `Fixtures/archive/hostile/`.
  let file: String
  /// Where it is refused.
  let stage: RefusalStage
  /// The error's code.
  let code: KeyedArchiveError.Code
  /// The error's key path.
  let keyPath: String

  /// The file name.
  var testDescription: String { file }
}

/// `$top.root` followed by one `.NS.objects[i]` step for each index: the key path of an object
/// reached through nested NSArrays.
func arrayPath(_ indices: [Int]) -> String {
  "$top.root" + indices.map { ".NS.objects[\($0)]" }.joined()
}

/// Reads a hostile archive, then decodes its root.
///
/// - Returns: the first `KeyedArchiveError` and where it was thrown, or nil (recording an issue for
///   any other error) when there is none.
func refusal(_ bytes: Data, limits: KeyedArchiveLimits = .default) -> (
  RefusalStage, KeyedArchiveError
)? {
  let archive: KeyedArchive
  do {
    archive = try KeyedArchive(decoding: bytes, limits: limits)
  } catch let error as KeyedArchiveError {
    return (.reading, error)
  } catch {
    Issue.record("not a KeyedArchiveError: \(error)")
    return nil
  }
  do {
    _ = try archive.decodeRoot(limits: limits)
  } catch let error as KeyedArchiveError {
    return (.decoding, error)
  } catch {
    Issue.record("not a KeyedArchiveError: \(error)")
  }
  return nil
}

// The 1,000,001st object visited in exponential-sharing.archive, where the default `maximumVisits`
// stops the walk. The archive is a complete binary tree of depth 40 walked depth first, first element
// first, so the visit's path is found by counting visits (Python: a preorder walk that stops at the
// 1,000,001st node); each digit is the NS.objects index taken at one level.
private let millionthVisit = "000000000000000000000111101000010001000".map { Int(String($0))! }

private let hostileArchives: [HostileArchive] = [
  HostileArchive(
    file: "cycle.archive", stage: .decoding, code: .cycle, keyPath: "$top.root.NS.objects[0]"),
  HostileArchive(
    file: "self-class.archive", stage: .reading, code: .badClass, keyPath: "$objects[1].$class"),
  HostileArchive(
    file: "uid-out-of-range.archive", stage: .reading, code: .uidOutOfRange,
    keyPath: "$objects[1].NS.objects[1]"),
  HostileArchive(
    file: "class-is-string.archive", stage: .reading, code: .badClass,
    keyPath: "$objects[1].$class"),
  HostileArchive(
    file: "exponential-sharing.archive", stage: .decoding, code: .limitExceeded,
    keyPath: arrayPath(millionthVisit)),
  HostileArchive(
    file: "deep-chain.archive", stage: .decoding, code: .limitExceeded,
    keyPath: arrayPath(Array(repeating: 0, count: 256))),
  HostileArchive(file: "missing-top.archive", stage: .reading, code: .envelope, keyPath: "$top"),
  HostileArchive(file: "empty-top.archive", stage: .reading, code: .envelope, keyPath: "$top"),
  HostileArchive(
    file: "objects-not-array.archive", stage: .reading, code: .envelope, keyPath: "$objects"),
  HostileArchive(
    file: "keys-objects-mismatch.archive", stage: .decoding, code: .badObject,
    keyPath: "$top.root.NS.keys"),
]

/// `[$null, root, inner, "leaf", NSArray class]`: the root holds `inner` twice and `inner` holds the
/// leaf twice, so decoding visits 7 objects (the root, then `inner` and its two leaves, twice).
private func smallSharedArchive() throws -> KeyedArchive {
  let arrayClass = PropertyListValue.dictionary([
    "$classname": .string("NSArray"),
    "$classes": .array([.string("NSArray"), .string("NSObject")]),
  ])
  return try KeyedArchive(
    objects: [
      .string("$null"),
      .dictionary(["$class": .uid(4), "NS.objects": .array([.uid(2), .uid(2)])]),
      .dictionary(["$class": .uid(4), "NS.objects": .array([.uid(3), .uid(3)])]),
      .string("leaf"),
      arrayClass,
    ], rootKey: "root")
}

/// Hostile archives are refused with exact codes and key paths, within the limits.
@Suite("Hostile archives")
struct HostileArchiveTests {
  @Test("Each hostile archive is refused with its code and key path", arguments: hostileArchives)
  func refused(hostile: HostileArchive) throws {
    let bytes = try fixture("archive/hostile/" + hostile.file)
    let (stage, error) = try #require(refusal(bytes))
    #expect(stage == hostile.stage)
    #expect(error.code == hostile.code, "\(error)")
    #expect(error.keyPath == hostile.keyPath)
    #expect(error.propertyListError == nil)
  }

  @Test("The 10,000-deep chain stops at the depth limit", arguments: [1, 10, 100, 256])
  func deepChain(maximumDepth: Int) throws {
    let archive = try KeyedArchive(decoding: try fixture("archive/hostile/deep-chain.archive"))
    let limits = KeyedArchiveLimits(maximumDepth: maximumDepth)
    let error = try #require(throws: KeyedArchiveError.self) {
      try archive.decodeRoot(limits: limits)
    }
    #expect(error.code == .limitExceeded)
    // The object one deeper than the limit: the root is at depth 1.
    #expect(error.keyPath == arrayPath(Array(repeating: 0, count: maximumDepth)))
    #expect(error.keyPath.hasPrefix("$top.root.NS.objects[0].NS.objects[0]") == (maximumDepth > 1))
  }

  @Test("A chain as deep as the limit decodes")
  func chainWithinDepth() throws {
    // The last 256 arrays of the chain: object 9,745 is 256 deep counting itself.
    let archive = try KeyedArchive(decoding: try fixture("archive/hostile/deep-chain.archive"))
    var value = try archive.decodeValue(9_745)
    var depth = 1
    while case .array(let elements, _) = value, let next = elements.first {
      value = next
      depth += 1
    }
    #expect(depth == 256)
    #expect(value == .array([]))
    #expect(throws: KeyedArchiveError.self) { try archive.decodeValue(9_744) }
  }

  // The walk is depth first: visits 1 to 41 go down the first elements to the leaf, visit 42 is the
  // leaf's second occurrence; the visit after the limit is the one refused.
  @Test(
    "Exponential sharing stops at the visit limit",
    arguments: [
      (0, []), (1, [0]), (40, Array(repeating: 0, count: 40)),
      (41, Array(repeating: 0, count: 39) + [1]), (1_000_000, millionthVisit),
    ] as [(Int, [Int])])
  func exponentialSharing(maximumVisits: Int, refusedAt indices: [Int]) throws {
    let archive = try KeyedArchive(
      decoding: try fixture("archive/hostile/exponential-sharing.archive"))
    let error = try #require(
      decodingError(archive, limits: KeyedArchiveLimits(maximumVisits: maximumVisits)))
    #expect(error.code == .limitExceeded)
    #expect(error.keyPath == arrayPath(indices))
  }

  @Test(
    "A small maximumVisits is respected exactly",
    arguments: [
      (7, nil), (6, "$top.root.NS.objects[1].NS.objects[1]"),
      (4, "$top.root.NS.objects[1]"), (1, "$top.root.NS.objects[0]"), (0, "$top.root"),
    ] as [(Int, String?)])
  func smallVisitLimit(maximumVisits: Int, failsAt keyPath: String?) throws {
    let archive = try smallSharedArchive()
    let limits = KeyedArchiveLimits(maximumVisits: maximumVisits)
    guard let keyPath else {
      let inner = ArchivedValue.array([.string("leaf"), .string("leaf")])
      #expect(try archive.decodeRoot(limits: limits) == .array([inner, inner]))
      return
    }
    let error = try #require(throws: KeyedArchiveError.self) {
      try archive.decodeRoot(limits: limits)
    }
    #expect(error.code == .limitExceeded)
    #expect(error.keyPath == keyPath)
  }

  // NSKeyedUnarchiver reads UID 0 as nil wherever it appears: Linux Foundation refuses an NSURL whose
  // NS.relative is UID 0 and traps on an NSString whose NS.string is. Reading the `$null` marker as
  // the text "$null" would also change the archive when it is written back.
  @Test(
    "A string or data field naming UID 0 ($null) is refused, not read as \"$null\"",
    arguments: [
      ("NSMutableString", "NS.string"), ("NSURL", "NS.relative"), ("NSMutableData", "NS.data"),
    ])
  func fieldNamingNull(className: String, key: String) throws {
    let classObject = PropertyListValue.dictionary([
      "$classname": .string(className),
      "$classes": .array([.string(className), .string("NSObject")]),
    ])
    let archive = try KeyedArchive(
      objects: [.string("$null"), .dictionary(["$class": .uid(2), key: .uid(0)]), classObject],
      rootKey: "root")
    let error = try #require(throws: KeyedArchiveError.self) { try archive.decodeRoot() }
    #expect(error.code == .badObject)
    #expect(error.keyPath == "$top.root.\(key)")
  }
}

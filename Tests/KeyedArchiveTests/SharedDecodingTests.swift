import Foundation
@_spi(Differential) import KeyedArchive
import PropertyList
import TestSupport
import Testing

// Decoding reuses what it decoded of a shared object, and must give what expanding every reference
// gives: the same value, or the same error with the same message and key path.

/// What decoding an archive's root gave: its value or its error.
private typealias Outcome = Result<ArchivedValue, KeyedArchiveError>

/// The root decoded reusing shared instances (as `decodeRoot` decodes it), or expanding every
/// reference.
private func outcome(_ archive: KeyedArchive, _ limits: KeyedArchiveLimits, reusing: Bool = true)
  -> Outcome
{
  archive.decodeRootCountingInstances(reusing: reusing, limits: limits).result
}

/// An outcome in words, without the value: a graph shared exponentially would take as long to
/// describe as to expand (which is also why outcomes are compared outside `#expect`, which
/// describes what it compares when it fails).
private func described(_ outcome: Outcome) -> String {
  switch outcome {
  case .success: "a value"
  case .failure(let error): "\(error.code): \(error)"
  }
}

/// The error decoding the root throws, or nil after recording an issue. Unlike
/// `#require(throws:)`, it does not describe a value decoded instead.
func decodingError(_ archive: KeyedArchive, limits: KeyedArchiveLimits = .default)
  -> KeyedArchiveError?
{
  switch outcome(archive, limits) {
  case .failure(let error): return error
  case .success:
    Issue.record("decoded, where an error was expected")
    return nil
  }
}

/// Nil when reusing and expanding decode the root alike, else what each gave.
private func disagreement(_ archive: KeyedArchive, _ limits: KeyedArchiveLimits) -> String? {
  let reused = outcome(archive, limits)
  let expanded = outcome(archive, limits, reusing: false)
  return reused == expanded
    ? nil : "reusing gave \(described(reused)), expanding \(described(expanded))"
}

private let arrayClass = PropertyListValue.dictionary([
  "$classname": .string("NSArray"), "$classes": .array([.string("NSArray"), .string("NSObject")]),
])

private func array(_ uids: UInt64...) -> PropertyListValue {
  .dictionary(["$class": .uid(8), "NS.objects": .array(uids.map { .uid($0) })])
}

/// The root holds `shared` (3 levels: objects 2, 3 and 4) at depth 2, then again at depth 4 below
/// objects 5 and 6: the second time it nests to depth 6. Object 7 is a string, object 8 the class.
private func sharedAtTwoDepths() throws -> KeyedArchive {
  try KeyedArchive(
    objects: [
      .string("$null"), array(2, 5), array(3), array(4, 7), array(), array(6), array(2),
      .string("leaf"), arrayClass,
    ], rootKey: "root")
}

/// The keyed-archive fuzzer's find whose objects share each other exponentially.
private let exponentialFind = "decoding-shared-exponentially-timeout-from-fuzzer"

/// The archives of `Fixtures/archive` (hostile ones included) that read, and the crafted ones.
private func archivesToCompare() throws -> [(String, KeyedArchive)] {
  var archives = [("sharedAtTwoDepths", try sharedAtTwoDepths())]
  for path in fixturesRecursively("archive") where path.hasSuffix(".archive") {
    if let archive = try? KeyedArchive(decoding: try fixture(path)) {
      archives.append((path, archive))
    }
  }
  for name in archiveFuzzRegressions {
    if let archive = try? KeyedArchive(decoding: try fuzzRegression(name)) {
      archives.append((name, archive))
    }
  }
  return archives
}

@Suite("Decoding shared objects once")
struct SharedDecodingTests {
  @Test(
    "A shared object met again deeper than the limit allows is refused where expanding refuses it",
    arguments: [
      (6, nil), (5, arrayPath([1, 0, 0, 0, 0])), (4, arrayPath([1, 0, 0, 0])),
      (3, arrayPath([0, 0, 0])),
    ] as [(Int, String?)])
  func depthOfASharedObject(maximumDepth: Int, refusedAt keyPath: String?) throws {
    let archive = try sharedAtTwoDepths()
    let limits = KeyedArchiveLimits(maximumDepth: maximumDepth)
    let reused = outcome(archive, limits)
    #expect(disagreement(archive, limits) == nil)
    guard let keyPath else {
      let shared = ArchivedValue.array([.array([.array([]), .string("leaf")])])
      #expect(reused == .success(.array([shared, .array([.array([shared])])])))
      return
    }
    guard case .failure(let error) = reused else {
      Issue.record("decoded under a depth of \(maximumDepth)")
      return
    }
    #expect(error.code == .limitExceeded)
    #expect(error.keyPath == keyPath)
  }

  /// Each `maximumVisits` from 0 to one past what the whole graph takes, so that the limit falls on
  /// every visit once: in an object decoded the first time, or in one met again.
  @Test("Every visit limit stops both decoders at the same object")
  func everyVisitLimit() throws {
    let archive = try sharedAtTwoDepths()
    // Root 1; object 2 and its graph 4 (2, 3, 4, 7); 5 and 6; object 2's graph again 4.
    #expect(
      try archive.decodeRoot(limits: KeyedArchiveLimits(maximumVisits: 11))
        == outcome(archive, .default, reusing: false).get())
    #expect(
      decodingError(archive, limits: KeyedArchiveLimits(maximumVisits: 10))?.keyPath
        == arrayPath([1, 0, 0, 0, 1]))
    for maximumVisits in 0...12 {
      let limits = KeyedArchiveLimits(maximumVisits: maximumVisits)
      #expect(disagreement(archive, limits) == nil, "maximumVisits \(maximumVisits)")
    }
  }

  @Test(
    "Every archive fixture decodes alike both ways, under limits tight and loose",
    arguments: [
      KeyedArchiveLimits(maximumDepth: 1, maximumVisits: 1_000),
      KeyedArchiveLimits(maximumDepth: 3, maximumVisits: 1_000),
      KeyedArchiveLimits(maximumDepth: 40, maximumVisits: 5),
      KeyedArchiveLimits(maximumDepth: 40, maximumVisits: 41),
      KeyedArchiveLimits(maximumDepth: 39, maximumVisits: 2_000),
      KeyedArchiveLimits(maximumDepth: 256, maximumVisits: 30),
      KeyedArchiveLimits(maximumDepth: 256, maximumVisits: 20_000),
    ])
  func fixtures(limits: KeyedArchiveLimits) throws {
    let archives = try archivesToCompare()
    #expect(archives.count >= 30)
    for (name, archive) in archives {
      #expect(disagreement(archive, limits) == nil, "\(name)")
    }
  }

  /// A 1,237-byte archive the fuzzer made, whose objects share each other exponentially: expanding
  /// every reference took half a second (in a release build; four in a debug one) to reach the
  /// million visits and refuse it. Reused, its few objects are decoded once each.
  @Test(
    "The fuzzer's exponentially shared archive is refused at the millionth visit, as expanding it is"
  )
  func fuzzerFind() throws {
    let archive = try KeyedArchive(decoding: try fuzzRegression(exponentialFind))
    let error = try #require(decodingError(archive))
    // Where expanding every reference refuses it too (compared once; it takes seconds in a debug
    // build).
    #expect(error.code == .limitExceeded)
    #expect(error.message == "more than 1000000 objects visited (objects shared exponentially?)")
    #expect(
      error.keyPath == arrayPath([1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 1, 1, 0, 1, 1]))
    // Under a small limit, expanding is quick, and the two agree.
    let limits = KeyedArchiveLimits(maximumVisits: 5_000)
    #expect(disagreement(archive, limits) == nil)
    #expect(throws: KeyedArchiveError.self) { try URLResponseArchive(archive: archive) }
  }

  /// The work is counted in instances decoded, not timed: a shared instance reused counts nothing.
  /// Expanding every reference is counted too where it takes less than seconds; for the archives
  /// shared exponentially, up to the million visits, it decodes an instance at about every visit.
  @Test(
    "Each shared instance is decoded once, but for those on the way to an error",
    arguments: [
      // Objects 1 to 6; expanding decodes 2, 3 and 4 again.
      ("sharedAtTwoDepths", KeyedArchiveLimits.default, 6, 9),
      // Object 2 is met again too deep, and decoded again as far as the error: 2 and 3.
      ("sharedAtTwoDepths", KeyedArchiveLimits(maximumDepth: 5), 8, 8),
      ("exponential-sharing.archive", KeyedArchiveLimits.default, 57, nil),
      ("exponential-sharing.archive", KeyedArchiveLimits(maximumVisits: 5_000), 49, 2_516),
      (exponentialFind, KeyedArchiveLimits.default, 39, nil),
      (exponentialFind, KeyedArchiveLimits(maximumVisits: 5_000), 31, 2_506),
    ] as [(String, KeyedArchiveLimits, Int, Int?)])
  func decodedInstances(name: String, limits: KeyedArchiveLimits, reusing: Int, expanding: Int?)
    throws
  {
    let archive: KeyedArchive
    switch name {
    case "sharedAtTwoDepths": archive = try sharedAtTwoDepths()
    case exponentialFind: archive = try KeyedArchive(decoding: try fuzzRegression(name))
    default: archive = try KeyedArchive(decoding: try fixture("archive/hostile/" + name))
    }
    #expect(
      archive.decodeRootCountingInstances(reusing: true, limits: limits).decodedInstances
        == reusing)
    if let expanding {
      #expect(
        archive.decodeRootCountingInstances(reusing: false, limits: limits).decodedInstances
          == expanding)
    }
  }

  @Test("The exponential-sharing fixture decodes whole when the limit allows its 2^41 visits")
  func exponentialSharingWhole() throws {
    let archive = try KeyedArchive(
      decoding: try fixture("archive/hostile/exponential-sharing.archive"))
    // Without the reuse, the decoding below would not end: fail first instead.
    try #require(
      archive.decodeRootCountingInstances(reusing: true, limits: .default).decodedInstances < 100)
    var value = try archive.decodeRoot(limits: KeyedArchiveLimits(maximumVisits: Int.max))
    var levels = 1
    // Not compared with `==`, which would walk both halves at every level.
    while case .array(let elements, _) = value, elements.count == 2, let first = elements.first {
      value = first
      levels += 1
    }
    #expect(levels == 41)
    #expect(
      decodingError(archive, limits: KeyedArchiveLimits(maximumVisits: 1 << 41 - 2))?.code
        == .limitExceeded)
  }
}

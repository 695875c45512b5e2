import PortableFoundation
@_spi(InPlace) import PropertyList

// A Network.framework blob archives its current and original requests as two objects even when
// the download was never redirected and they hold the same values: writing the second one's
// archive apart (`SubArchiveWriter.archivedAsRoot`) then costs as much as the first and gives the
// same bytes. Comparing the two objects' graphs costs a twentieth of that or less.
//
// Why alike graphs write the same bytes: the writer reads an object from the archive as its
// decoding does, expanding a shared object at each reference, and what it writes is a function
// of what it reads (it writes what the tree writer writes for the decoded value). What it reads
// of an object depends on the UIDs involved in three ways only: UID 0 is nil; a UID must name an
// object (every UID of a checked view does); and a UID met again below itself is a cycle, which
// fails the write. The comparison below holds UID 0 to UID 0. A shared object (the same UID, or
// the same plist object, on both sides) is one graph below it; and when the first object's write
// succeeded, its graph has no cycle below any object it reaches, so neither has the second's: a
// cycle in the second's, through an object the first's reaches too, would be in the first's.
// Every other difference between the two graphs (a marker, a byte, a count, the order of keys)
// makes them unlike, even where the writer would write the same bytes all the same.
//
// Its tree twin: writing the second object's archive apart. Held equal by
// `SubArchiveDifferential.alikePairs` in Tests/ResumeDataTests/SubArchiveAlikeTests.swift, and
// by the fuzz harnesses Fuzz/Sources/FuzzKeyedArchive/KeyedArchiveHarness.swift (check 5), and
// Fuzz/Sources/FuzzResumeData/main.swift and Fuzz/Sources/FuzzBatch/main.swift, which set
// `SubArchiveDifferential.checksAlikeWrites`.

extension KeyedArchiveView {
  /// Most objects compared before giving up (unlike): as many as the writer visits.
  static let alikeVisits = subArchiveVisits
  /// Deepest nesting compared before giving up: the writer's 64 instances, each a dictionary
  /// holding UIDs, and arrays of them.
  static let alikeDepth = 256

  /// Whether the objects UIDs `a` and `b` name unfold to the same graph: equal but for which
  /// objects of the archive hold it, with UID 0 only where the other has UID 0. When
  /// `archivedAsRoot(a)` writes an archive, `archivedAsRoot(b)` then writes the same bytes (see
  /// the comment above). False when unsure (more than `alikeVisits` objects, or nesting deeper
  /// than `alikeDepth`). Both UIDs must be below `count`.
  package func unfoldsAlike(_ a: UInt64, _ b: UInt64) -> Bool {
    let comparison = AlikeComparison(
      view: self, table: table, bytes: plist.rawBytes.baseAddress!)
    var budget = Self.alikeVisits
    return comparison.alike(uids: a, b, depth: 0, &budget)
  }

  /// Whether a write that `unfoldsAlike` spares is made all the same and compared, stopping the
  /// process on any difference (always so in debug builds): for fuzzing.
  package static var checksAlikeWrites: Bool {
    _isDebugAssertConfiguration() || checksAlike.withLock { $0 }
  }

  static let checksAlike = Locked<Bool>(false)
}

/// What `unfoldsAlike` reads, held in locals (the view's bytes are behind a class's property,
/// which another module's code cannot inline).
private struct AlikeComparison {
  let view: KeyedArchiveView
  let table: BinaryObjects
  let bytes: UnsafeRawPointer

  func alike(uids a: UInt64, _ b: UInt64, depth: Int, _ budget: inout Int) -> Bool {
    if a == b { return true }
    guard a != 0, b != 0 else { return false }
    return alike(objects: view.object(a), view.object(b), depth: depth, &budget)
  }

  // Two distinct objects (callers pass the same object over: it is alike to itself).
  func alike(objects a: Int, _ b: Int, depth: Int, _ budget: inout Int) -> Bool {
    if a == b { return true }
    budget &-= 1
    guard budget >= 0, depth < KeyedArchiveView.alikeDepth else { return false }
    let (offsetA, offsetB) = (table.offset(a), table.offset(b))
    let markerA = bytes.load(fromByteOffset: offsetA, as: UInt8.self)
    let markerB = bytes.load(fromByteOffset: offsetB, as: UInt8.self)
    let kind = markerA >> 4
    guard markerB >> 4 == kind else { return false }
    switch kind {
    case 0x0, 0x1, 0x2, 0x3:
      // Booleans, integers, reals and dates: the marker says the width; the checked view holds
      // the bytes it says.
      guard markerA == markerB else { return false }
      let width = kind == 0x0 ? 0 : kind == 0x3 ? 8 : 1 << Int(markerA & 0x0F)
      return width == 0 || memcmp(bytes + offsetA + 1, bytes + offsetB + 1, width) == 0
    case 0x4, 0x5, 0x6:
      let (countA, startA) = table.contents(a)
      let (countB, startB) = table.contents(b)
      guard countA == countB else { return false }
      // A UTF-16 string's count is of 2-byte units.
      let length = kind == 0x6 ? countA &* 2 : countA
      return length == 0 || memcmp(bytes + startA, bytes + startB, length) == 0
    case 0x8:
      return alike(uids: table.uid(a), table.uid(b), depth: depth &+ 1, &budget)
    case 0xA, 0xD:
      let (countA, startA) = table.contents(a)
      let (countB, startB) = table.contents(b)
      guard countA == countB else { return false }
      // An array's elements, or a dictionary's keys then its values: most often the same
      // objects (keys, class names and values shared), passed over without a call.
      let references = kind == 0xD ? countA &* 2 : countA
      for position in 0..<references {
        let (elementA, elementB) = (
          table.reference(startA, position), table.reference(startB, position)
        )
        guard elementA == elementB || alike(objects: elementA, elementB, depth: depth &+ 1, &budget)
        else { return false }
      }
      return true
    default:
      return false
    }
  }
}

extension SubArchiveDifferential {
  /// Whether every write that `KeyedArchiveView.unfoldsAlike` spares (a Network.framework blob's
  /// original request archived apart) is made all the same and compared with the one that serves,
  /// stopping the process on any difference (always so in debug builds): for fuzzing.
  public static var checksAlikeWrites: Bool {
    get { KeyedArchiveView.checksAlike.withLock { $0 } }
    set { KeyedArchiveView.checksAlike.withLock { $0 = newValue } }
  }

  /// The pairs of distinct instances among the first `limit` objects of the archive `data` read
  /// in place that unfold alike, each instance paired with the next `partners` instances after it
  /// (so that the work stays small); nil when the archive is not read in place. Where
  /// `archivedAsRoot` writes the first of a pair, it must write the second to the same bytes.
  public static func alikePairs(
    _ data: Data, firstObjects limit: Int, partners: Int = 8,
    limits: PropertyListLimits = .default
  ) -> [(UInt64, UInt64)]? {
    guard let view = KeyedArchiveView(data, limits: limits) else { return nil }
    let instances = (1..<UInt64(max(1, min(view.count, limit)))).filter {
      view.table.isKind(view.object($0), .dictionary)
    }
    var pairs: [(UInt64, UInt64)] = []
    for (index, first) in instances.enumerated() {
      for second in instances[(index + 1)...].prefix(partners)
      where view.unfoldsAlike(first, second) {
        pairs.append((first, second))
      }
    }
    return pairs
  }
}

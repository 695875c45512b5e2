import Foundation
import FuzzCommon
@_spi(Differential) import KeyedArchive
import PropertyList

/// The check the keyed-archive target runs on every input the archive reader accepts.
///
/// 1. Encoding as binary and reading back gives the same `objects` and the same property list
///    (compared as values: the re-read archive is binary, so `KeyedArchive ==`, which also compares
///    the container format, would differ for XML inputs).
/// 2. `decodeRoot` may throw; `resolve` and rendering its tree as text and JSON must not crash.
///    Under tight and loose limits, `decodeRoot`, which decodes each shared object once, gives the
///    value or throws the error (code, message, key path) that expanding every reference gives.
/// 3. When the root is a request in CFNetwork's layout, every typed accessor is read, and the edits
///    run; setting the URL must give an archive that reads back with that URL.
/// 4. When a request converts to the other layout by renaming its keys in place, the renamed bytes
///    read back in that layout with the typed fields and object graph that rebuilding gives.
/// 5. Each object the sub-archive writer archives on its own from the bytes
///    (`KeyedArchiveView.archivedAsRoot`) is byte for byte what archiving its decoded value writes.
/// 6. Where the root-key peek (`ArchiveRootKeys(peekingBinaryArchive:)`) answers and the archive
///    decodes, it answers what the decoded archive's `rootKeys` say.
///
/// A failed check stops the process with `fatalError`, which libFuzzer reports as a crash.
enum KeyedArchiveHarness {
  /// Small limits, so that no single input can make a run slow: the library's own defaults allow a
  /// million visits and 16 million property-list elements.
  static let limits = KeyedArchiveLimits(
    propertyList: PropertyListLimits(
      maximumObjectCount: 100_000, maximumValueLength: 1 << 20,
      maximumVisitedElements: 100_000),
    maximumDepth: 256, maximumVisits: 100_000)

  static let editedURL = "https://example.com/x"

  static func run(_ input: UnsafeRawBufferPointer) -> CInt {
    let data = Data(fuzzerInput: input)
    checkFastPath(data)
    checkRenaming(data)
    checkSubArchives(data)
    // On every input, read or not: the peek must never trap on what the reader refuses.
    let peeked = ArchiveRootKeys(peekingBinaryArchive: data)
    let archive: KeyedArchive
    do {
      archive = try KeyedArchive(decoding: data, limits: limits)
    } catch {
      // Most generated inputs are malformed; refusing them is the reader's job.
      return 0
    }
    if let peeked, peeked != archive.rootKeys {
      fatalError("the root-key peek says \(peeked.rawValue), decoding \(archive.rootKeys.rawValue)")
    }
    checkBinaryRoundTrip(archive)
    exerciseDecodingAndDisplay(archive)
    if let request = try? URLRequestArchive(archive: archive) { exerciseRequest(request) }
    if let response = try? URLResponseArchive(archive: archive, limits: limits) {
      _ = (response.classChain, response.fields.count, response.url, response.statusCode)
      _ = response.headerFields
    }
    return 0
  }

  // MARK: 0. The request fast path against the eager path

  /// `URLRequestArchive(decoding:)` reads binary archives in place when it can; whatever it does,
  /// it must give what the eager path gives (see `RequestDifferential`).
  static func checkFastPath(_ data: Data) {
    if let difference = RequestDifferential.difference(data, limits: limits) {
      fatalError("the request fast path and the eager path differ: \(difference)")
    }
  }

  // MARK: 4. Layout conversion by renaming in place

  static func checkRenaming(_ data: Data) {
    guard let request = try? URLRequestArchive(decoding: data, limits: limits) else { return }
    let target: URLRequestArchive.Layout = request.layout == .standard ? .dollarNumbered : .standard
    guard let renamed = request.renamedInPlace(to: target) else { return }
    let reread: URLRequestArchive
    do {
      reread = try URLRequestArchive(decoding: renamed, limits: limits)
    } catch {
      fatalError("renamed request does not read back: \(error)\n  input \(hex(data))")
    }
    // Rebuilding gives the layout the renaming must give (a request whose `$2` counts fewer slots
    // than it has keeps the keys past the count, and may keep its layout).
    guard let rebuilt = try? request.converted(to: target) else { return }
    guard reread.layout == rebuilt.layout, reread.archive.rootKey == rebuilt.archive.rootKey else {
      fatalError(
        "renamed request reads back in layout \(reread.layout), rebuilt in \(rebuilt.layout)"
          + "\n  input \(hex(data))")
    }
    let same =
      reread.slotCount == rebuilt.slotCount && reread.className == rebuilt.className
      && reread.url == rebuilt.url && reread.httpMethod == rebuilt.httpMethod
      && reread.headerFields.map { [$0.name, $0.value] }
        == rebuilt.headerFields.map { [$0.name, $0.value] }
      && reread.body == rebuilt.body
      && URLRequestArchive.Slot.allCases.allSatisfy {
        reread.slotValue($0) == rebuilt.slotValue($0)
      }
      && (try? reread.archive.decodeRoot(limits: limits))
        == (try? rebuilt.archive.decodeRoot(limits: limits))
    if !same {
      fatalError("renamed and rebuilt requests differ\n  input \(hex(data))")
    }
  }

  // MARK: 5. Objects archived on their own from the bytes

  static func checkSubArchives(_ data: Data) {
    // The check that lets a Network.framework blob be read in place is the writer's walk alone.
    if let uid = SubArchiveDifferential.checkDisagreement(
      data, firstObjects: 48, limits: limits.propertyList)
    {
      fatalError(
        "object \(uid): the check and the writer from the bytes disagree\n  input \(hex(data))")
    }
    // Each object written gets a view of its bytes from what the writer knows of them: the view
    // checking them makes.
    if let views = SubArchiveDifferential.writtenViews(
      data, firstObjects: 48, limits: limits.propertyList),
      let (uid, difference) = views.differences.first
    {
      fatalError(
        "object \(uid): the view from the writer's facts differs: \(difference)\n"
          + "  input \(hex(data))")
    }
    guard
      let archives = SubArchiveDifferential.archivedAsRoot(
        data, firstObjects: 48, limits: limits.propertyList),
      !archives.isEmpty
    else { return }
    // Two objects that unfold alike are written to the same bytes (a Network.framework blob's
    // original request is then not written again).
    for (first, second) in SubArchiveDifferential.alikePairs(
      data, firstObjects: 48, limits: limits.propertyList) ?? []
    where archives[first] != nil && archives[second] != archives[first] {
      fatalError(
        "objects \(first) and \(second) unfold alike but are written apart to different bytes\n"
          + "  input \(hex(data))")
    }
    guard let archive = try? KeyedArchive(decoding: data, limits: limits) else { return }
    for (uid, fromBytes) in archives {
      let decoded: Data
      do {
        decoded = try KeyedArchive(root: archive.decodeValue(uid, limits: limits)).encoded()
      } catch {
        fatalError(
          "object \(uid) archived from the bytes, but decoding it threw \(error)\n"
            + "  input \(hex(data))")
      }
      if fromBytes != decoded {
        fatalError("object \(uid) archived from the bytes differs\n  input \(hex(data))")
      }
    }
  }

  static func hex(_ data: Data) -> String {
    data.prefix(1024).map { String(format: "%02x", $0) }.joined()
  }

  // MARK: 1. Binary round trip

  static func checkBinaryRoundTrip(_ archive: KeyedArchive) {
    let encoded: Data
    do {
      encoded = try archive.encoded(as: .binary)
    } catch {
      fail(
        "encoding an archive read from \(archive.format) as binary threw: \(error)", archive, nil)
    }
    let reread: KeyedArchive
    do {
      // Default limits: the flattened output never shares containers, so it can hold more objects
      // than the input (up to the input's visited-element count), which the small limits might refuse.
      reread = try KeyedArchive(decoding: encoded)
    } catch {
      fail("reading back our own binary encoding threw: \(error)", archive, encoded)
    }
    if reread.format != .binary {
      fail("our binary encoding read back as \(reread.format)", archive, encoded)
    }
    if !sameValue(.array(reread.objects), .array(archive.objects)) {
      let got = RoundTripHarness.clip(.array(reread.objects))
      fail("$objects differ after binary round trip:\n  got \(got)", archive, encoded)
    }
    if !sameValue(reread.propertyList, archive.propertyList) {
      let got = RoundTripHarness.clip(reread.propertyList)
      fail("property list differs after binary round trip:\n  got \(got)", archive, encoded)
    }
  }

  /// Equal, or equal once reals are compared by value only: like CFBinaryPList, the flattener shares
  /// one object among equal reals of either width, so a 32-bit real can come back 64-bit.
  static func sameValue(_ lhs: PropertyListValue, _ rhs: PropertyListValue) -> Bool {
    lhs == rhs
      || RoundTripHarness.normalized(lhs, .realWidths)
        == RoundTripHarness.normalized(rhs, .realWidths)
  }

  // MARK: 2. Typed decoding and display

  static func exerciseDecodingAndDisplay(_ archive: KeyedArchive) {
    _ = try? archive.decodeRoot(limits: limits)
    checkSharedDecoding(archive)
    _ = (archive.archiver, archive.rootKey, archive.rootUID, archive.extraTopLevelKeys)
    let tree = archive.resolve(limits: limits)
    let text = tree.text(label: "root")
    let json = tree.json()
    if text.isEmpty || json.isEmpty {
      fail("rendering the resolved tree gave empty output", archive, nil)
    }
  }

  /// Limits under which expanding every reference stays quick: one the fixtures' graphs pass, and
  /// one tight enough that shared objects meet the depth and visit limits.
  static let sharedDecodingLimits = [
    KeyedArchiveLimits(propertyList: limits.propertyList, maximumDepth: 256, maximumVisits: 10_000),
    KeyedArchiveLimits(propertyList: limits.propertyList, maximumDepth: 6, maximumVisits: 40),
  ]

  static func checkSharedDecoding(_ archive: KeyedArchive) {
    for limits in sharedDecodingLimits {
      let reused = archive.decodeRootCountingInstances(reusing: true, limits: limits).result
      let expanded = archive.decodeRootCountingInstances(reusing: false, limits: limits).result
      guard reused != expanded else { continue }
      // Values are not printed: a graph shared exponentially takes as long to print as to expand.
      let described = [reused, expanded].map { result in
        switch result {
        case .success: "a value"
        case .failure(let error): "\(error.code) \(error)"
        }
      }
      fail(
        "decoding each shared object once gave \(described[0]), expanding every reference "
          + "\(described[1]), under \(limits.maximumDepth) levels and \(limits.maximumVisits) visits",
        archive, nil)
    }
  }

  // MARK: 3. Request views and edits

  static func exerciseRequest(_ request: URLRequestArchive) {
    _ = (request.className, request.layout, request.slotCount)
    _ = (request.url, request.mainDocumentURL, request.httpMethod, request.body)
    _ = (request.headerFields.count, request.headerValue("Content-Type"))
    _ = (request.timeoutInterval, request.cachePolicy, request.httpShouldHandleCookies)
    _ = (request.allowsCellularAccess, request.networkServiceType, request.priority)
    // slotCount comes from the input ($2) and can be anything; the known slots stop at 21.
    for index in 0..<max(0, min(request.slotCount, 32)) {
      _ = (request.key(ofSlot: index), request.slotObject(index))
    }
    for slot in URLRequestArchive.Slot.allCases { _ = request.slotValue(slot) }
    _ = try? request.encoded()

    if let edited = try? request.settingURL(editedURL) {
      let bytes: Data
      do {
        bytes = try edited.encoded()
      } catch {
        fail("encoding a request after settingURL threw: \(error)", request.archive, nil)
      }
      let reread: URLRequestArchive
      do {
        reread = try URLRequestArchive(decoding: bytes)
      } catch {
        fail("a request after settingURL does not read back: \(error)", request.archive, bytes)
      }
      if reread.url != editedURL {
        fail(
          "a request after settingURL reads back with url \(String(describing: reread.url))",
          request.archive, bytes)
      }
    }
    if let withHeader = try? request.settingHeader("X-Fuzz", to: "1") {
      _ = (withHeader.headerValue("X-Fuzz"), try? withHeader.encoded())
    }
    _ = try? request.settingHeader("X-Fuzz", to: nil)
    if let dollar = try? request.converted(to: .dollarNumbered) {
      _ = (dollar.url, try? dollar.encoded())
      if let standard = try? dollar.converted(to: .standard) {
        _ = (standard.url, try? standard.encoded())
      }
    }
  }

  // MARK: Failure

  static func fail(_ message: String, _ archive: KeyedArchive, _ encoded: Data?) -> Never {
    var report =
      "keyed archive check failed: \(message)\n  read (\(archive.format)) "
      + RoundTripHarness.clip(archive.propertyList)
    if let encoded {
      let hex = encoded.prefix(512).map { String(format: "%02x", $0) }.joined()
      report += "\n  encoded (\(encoded.count) bytes) \(hex)"
    }
    fatalError(report)
  }
}

import PortableFoundation
@_spi(InPlace) import PropertyList

/// A keyed archive that is decoded from its bytes only when first asked for, for views that read
/// their typed fields straight from the bytes (see `KeyedArchiveView`).
///
/// The bytes have already been checked to decode, so decoding cannot fail. Immutable once decoded,
/// and the decoding is guarded by a mutex, so the box can be shared across threads.
package final class LazyKeyedArchive: Sendable, Hashable {
  /// How the bytes become an archive: each way reproduces, exactly, what the eager path it stands in
  /// for would have built.
  package enum Recipe: Sendable {
    /// `KeyedArchive(decoding:limits:)`, which keeps the bytes for string sharing when re-encoding.
    case decoding(KeyedArchiveLimits)
    /// `KeyedArchive(propertyList:format:)` of the binary plist, as `ResumeData` builds its archive.
    case propertyList(PropertyListLimits)
  }

  // Set once, and the checked plist the bytes were read through until the archive is decoded,
  // and whether the bytes are their own encoding once that has been checked: what `encoded()`
  // needs to write an archive without decoding it. A `Locked` rather than a lock object: on Linux
  // (where it is a `Mutex`) one allocation fewer per archive.
  private struct State: @unchecked Sendable {
    // The view is only touched under the mutex.
    var decoded: KeyedArchive?
    var view: BinaryPropertyListView?
    var reproducesBytes: Bool?
  }
  private let state: Locked<State>
  private let bytes: Data?
  private let recipe: Recipe?

  /// A box around an archive already decoded.
  package init(_ archive: KeyedArchive) {
    state = Locked(State(decoded: archive))
    bytes = nil
    recipe = nil
  }

  /// A box that decodes `bytes` on first use; the caller has checked that they decode.
  ///
  /// - Parameter view: the checked plist of `bytes`, when the caller has it: `encoded()` can then
  ///   write the archive without decoding it.
  package init(bytes: Data, recipe: Recipe, view: BinaryPropertyListView? = nil) {
    self.bytes = bytes
    self.recipe = recipe
    state = Locked(State(view: view))
  }

  /// A box that decodes `bytes` on first use, for bytes written by this library's archive writer
  /// (`KeyedArchive.encoded(as: .binary)`, or a writer that gives its bytes), which decode and are
  /// already their own encoding: `encoded()` returns them without decoding.
  package init(writtenBytes bytes: Data, limits: PropertyListLimits) {
    self.bytes = bytes
    recipe = .propertyList(limits)
    state = Locked(State(reproducesBytes: true))
  }

  /// A box that decodes `bytes` as this one decodes its own, on first use: for bytes made from
  /// this box's by a rewrite that keeps them decodable (a rename of keys); nil for a box around an
  /// archive already decoded.
  package func decoding(_ bytes: Data) -> LazyKeyedArchive? {
    recipe.map { LazyKeyedArchive(bytes: bytes, recipe: $0) }
  }

  /// Whether the archive has not been decoded yet.
  package var isPending: Bool {
    state.withLock { $0.decoded == nil }
  }

  /// The archive, decoded now if it was not yet.
  package var archive: KeyedArchive {
    state.withLock { state in
      if let decoded = state.decoded { return decoded }
      let archive = Self.decode(bytes ?? Data(), recipe ?? .decoding(.default))
      state.decoded = archive
      state.view = nil
      return archive
    }
  }

  /// `archive.encoded()`. An archive of the `.propertyList` recipe that has not been decoded and
  /// whose bytes are already exactly what encoding it writes (`ArchiverFlattener.reproducesBytes`,
  /// as CFNetwork's and this library's writers make them) is not decoded: its bytes are returned.
  ///
  /// - Throws: what `KeyedArchive.encoded()` throws.
  package func encoded() throws -> Data {
    let reproduced = state.withLock { state -> Data? in
      guard state.decoded == nil, let bytes, case .propertyList? = recipe else { return nil }
      if state.reproducesBytes == nil {
        state.reproducesBytes = state.view.map(ArchiverFlattener.reproducesBytes) ?? false
        state.view = nil
      }
      return state.reproducesBytes == true ? bytes : nil
    }
    if let reproduced { return reproduced }
    return try archive.encoded()
  }

  private static func decode(_ bytes: Data, _ recipe: Recipe) -> KeyedArchive {
    do {
      switch recipe {
      case .decoding(let limits):
        return try KeyedArchive(decoding: bytes, limits: limits)
      case .propertyList(let limits):
        return try KeyedArchive(
          propertyList: PropertyListValue.decode(bytes, limits: limits).value, format: .binary)
      }
    } catch {
      // The fast path only defers to this box after checking everything the eager decoders check
      // (the fuzz targets compare the two on every input): reaching this is a bug in that check.
      fatalError("an archive the fast path accepted does not decode: \(error)")
    }
  }

  /// Equal archives. Boxes of the same bytes decoded the same way hold equal archives, so they are
  /// equal without decoding.
  package static func == (lhs: LazyKeyedArchive, rhs: LazyKeyedArchive) -> Bool {
    if lhs === rhs { return true }
    // Either recipe reads the same envelope and objects from the same bytes.
    if let left = lhs.bytes, let right = rhs.bytes, left == right { return true }
    return lhs.archive == rhs.archive
  }

  /// Hashes nothing: equal archives can come from different bytes, and hashing the archive would
  /// decode it. The values holding a box hash their other fields.
  package func hash(into hasher: inout Hasher) {}
}

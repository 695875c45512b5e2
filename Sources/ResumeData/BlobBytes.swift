import PortableFoundation
import PropertyList

/// The bytes a blob is: those it was read from, or, for a plain blob a conversion made from a
/// dictionary, the XML that dictionary is written as, written only when first asked for.
///
/// A conversion whose blob is edited next (the iOS 10.0–10.1 repair converts to v2, then rewrites
/// the request archives) writes the edited blob afresh: the XML of the conversion itself is then
/// never needed, and writing it cost as much as the rest of the conversion.
struct BlobBytes: Sendable, Hashable {
  private let read: Data?
  private let pending: PendingXML?

  /// Bytes read (or written) already.
  init(_ data: Data) {
    read = data
    pending = nil
  }

  /// The XML of `dictionary`, written on first use; `writable` must have vouched that writing it
  /// cannot fail.
  init(xmlOf dictionary: PropertyListDictionary, writable: WritableXML) {
    read = nil
    pending = PendingXML(dictionary, bounds: writable)
  }

  /// The bytes, written now if they were pending.
  var data: Data { read ?? pending!.bytes }

  /// The number of bytes, written now if they were pending.
  var count: Int { data.count }

  /// Whether there are fewer than `count` bytes: pending XML is written only when a lower bound
  /// on its length does not settle it.
  func isShorter(than count: Int) -> Bool {
    if let pending, pending.bounds.lowerBound >= count { return false }
    return data.count < count
  }

  /// For pending XML, whether its length once written lies within the bounds it was given (for
  /// the differential checks); nil for bytes that were not pending.
  var lengthIsWithinBounds: Bool? {
    guard let pending else { return nil }
    let count = pending.bytes.count
    return pending.bounds.lowerBound <= count && count <= pending.bounds.upperBound
  }

  static func == (lhs: BlobBytes, rhs: BlobBytes) -> Bool { lhs.data == rhs.data }

  func hash(into hasher: inout Hasher) { hasher.combine(data) }

  /// What `ResumeData.carriedExactlyByXML` found out of a dictionary's XML without writing it:
  /// bounds on its length. Only that check makes one, after vouching that the XML writer takes
  /// every value (no date or real, text of printable ASCII).
  struct WritableXML: Sendable {
    /// At most as many bytes as the XML has.
    var lowerBound: Int
    /// At least as many bytes as the XML has.
    var upperBound: Int
  }
}

/// A dictionary's XML, written once on first use (a mutex makes the box safe to share).
private final class PendingXML: Sendable {
  let dictionary: PropertyListDictionary
  let bounds: BlobBytes.WritableXML
  private let written = Locked<Data?>(nil)

  init(_ dictionary: PropertyListDictionary, bounds: BlobBytes.WritableXML) {
    self.dictionary = dictionary
    self.bounds = bounds
  }

  var bytes: Data {
    written.withLock { written in
      if let written { return written }
      do {
        let bytes = try PropertyListValue.dictionary(dictionary).encoded(as: .xml)
        written = bytes
        return bytes
      } catch {
        // `WritableXML` is only made for values the writer takes (the tests and fuzz targets
        // write every conversion's XML): reaching this is a bug in that check.
        fatalError("a dictionary checked to be writable as XML was not: \(error)")
      }
    }
  }
}

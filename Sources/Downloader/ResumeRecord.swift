import Foundation
import KeyedArchive
import OutputFiles
import PropertyList
import ResumeData

/// What resume data records about a download: its requests, validators and partial file.
struct ResumeRecord: Sendable {
  var original: URLRequestFields
  var current: URLRequestFields
  var entityTag: String?
  var lastModified: String?
  var tempFileName: String
  var directory: URL
  var generation: ResumeDataGeneration
  var stateFile: URL?

  /// Takes in what a response told: the URL it came from, and (when its body goes into the file)
  /// its validators.
  mutating func learn(_ learned: Transfer.Learned) {
    if let url = learned.url { current.url = url.absoluteString }
    if learned.wrote {
      entityTag = learned.entityTag
      lastModified = learned.lastModified
    }
  }

  /// Flushes the partial file, then writes the resume data for `bytes` on disk (and, for a
  /// segmented download, the segments of `map`), atomically, to the state file when there is one
  /// and `writingState`. The counts are taken before the flush, so that all they cover is on disk.
  func persist(
    _ bytes: Int64, segments map: SegmentMap? = nil, writingState: Bool = true,
    flush: () throws(DownloadError) -> Void
  ) throws(DownloadError) -> Data {
    try flush()
    let data = try encoded(bytes: bytes, segments: map)
    if writingState, let stateFile {
      // Flushed before the rename (Foundation's atomic write is not), so that a crash of the
      // machine leaves the old state or the new, never an empty file beside a partial file it no
      // longer describes; through a link, to the file it names; a FIFO or a device refused.
      let written = data.withUnsafeBytes { bytes in
        Result { () throws(OutputTargetError) in
          try OutputTarget.writeRegularFile(bytes, to: stateFile.path)
        }
      }
      if case .failure(let error) = written {
        throw DownloadError(.io, "cannot write \(stateFile.path): \(error.message)")
      }
    }
    return data
  }

  /// Resume data in Apple's layout for `bytes` on disk (the contiguous prefix) and, for a
  /// segmented download, its segment map.
  func encoded(bytes: Int64, segments map: SegmentMap? = nil) throws(DownloadError) -> Data {
    var entries: PropertyListDictionary = [
      ResumeDataKey.downloadURL: .string(current.url),
      ResumeDataKey.bytesReceived: .integer(PropertyListInteger(bytes)),
    ]
    if let map { entries[ResumeDataKey.segments] = .string(map.description) }
    do {
      entries[ResumeDataKey.currentRequest] = .data(try URLRequestArchive(current).encoded())
      entries[ResumeDataKey.originalRequest] = .data(try URLRequestArchive(original).encoded())
      if let entityTag { entries[ResumeDataKey.entityTag] = .string(entityTag) }
      if let lastModified { entries[ResumeDataKey.serverDownloadDate] = .string(lastModified) }
      entries[ResumeDataKey.tempFileName] = .string(tempFileName)
      return try ResumeData(building: entries, as: generation, temporaryDirectory: directory)
        .encoded()
    } catch {
      throw DownloadError(.io, "cannot make resume data: \(error)")
    }
  }
}

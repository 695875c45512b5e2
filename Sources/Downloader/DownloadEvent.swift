import Foundation

/// What a download reports as it goes, in order, through `Download.events`.
public enum DownloadEvent: Sendable, Hashable {
  /// Waiting for a free slot in a `DownloadManager`.
  case queued
  /// The first request went out, from byte 0.
  case started
  /// A request went out continuing from `offset` bytes already on disk.
  case resumed(offset: Int64)
  /// A segmented download continues from the map its resume data recorded: `bytesOnDisk` of the
  /// file's `total` bytes are held, in ranges anywhere in it (not an offset to continue from).
  case resumedSegments(bytesOnDisk: Int64, total: Int64)
  /// The partial file was discarded and the download starts over, and why.
  case restarted(reason: String)
  /// The download goes on over this many connections, each fetching segments of the file (the
  /// server allows ranges and names the file's length and a strong validator): the connections
  /// asked for, or fewer when what is left is too small to split that far
  /// (`DownloadConfiguration.minimumSegmentSize`).
  case segmented(connections: Int)
  /// More than one connection was asked for, but the download goes on over one, and why (the
  /// server ignores ranges, names no length or no strong validator, or encodes the file).
  case singleConnection(reason: String)
  /// The server redirected the request to this URL.
  case redirected(URL)
  /// Bytes arrived.
  case progress(DownloadProgress)
  /// The download paused (or was cancelled) and left this resume data (also written to the state
  /// file when one is configured).
  case paused(resumeData: Data)
  /// The file is complete at its destination, with its digest.
  case completed(file: URL, digest: String?)
  /// The download failed; its resume data, when the partial file is worth keeping.
  case failed(DownloadError, resumeData: Data?)
}

/// How far a download is.
public struct DownloadProgress: Sendable, Hashable {
  /// Bytes on disk.
  public var bytes: Int64
  /// The complete length, when the server told it.
  public var expected: Int64?
  /// Bytes per second over the last few seconds.
  public var bytesPerSecond: Double
  /// The time left at that speed, when the length is known and the speed is not zero.
  public var secondsRemaining: Double?

  /// Creates a progress report.
  public init(bytes: Int64, expected: Int64?, bytesPerSecond: Double, secondsRemaining: Double?) {
    self.bytes = bytes
    self.expected = expected
    self.bytesPerSecond = bytesPerSecond
    self.secondsRemaining = secondsRemaining
  }
}

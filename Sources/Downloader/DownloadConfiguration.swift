import Foundation
import ResumeData

/// How a download behaves: where its files go, how it retries, what it checks.
public struct DownloadConfiguration: Sendable {
  /// Where the partial file lives (named by a `TempFileName`, as Apple's blobs record it).
  public var temporaryDirectory: URL
  /// Directories a blob's absolute `LocalPath` may point into (besides `temporaryDirectory`).
  public var allowedDirectories: [URL] = []
  /// Where the resume data is kept while the download runs (written atomically, after flushing
  /// the partial file, and flushed itself before it replaces the last; through a link, to the
  /// file it names; a FIFO or a device is refused), so that a killed process, or a machine that
  /// lost power, can resume; nil to keep it only in memory.
  public var stateFile: URL?
  /// How often, while bytes arrive, the partial file is flushed and the state file brought up to
  /// date (CLI `--persist-interval`): a machine that loses power loses at most this long's bytes,
  /// and so does a killed segmented download (its map is as old as the state file; one connection
  /// continues from the partial file's length, which the kernel keeps). Each time costs two
  /// `fsync`s and a new state file.
  public var persistInterval: Duration = .seconds(1)
  /// How often a running download reports `DownloadEvent.progress` (CLI: a quarter second when
  /// standard error is a terminal, else a second). The watchdog that reports it also looks for
  /// stalls and brings the state file up to date: it wakes at the shortest of this,
  /// `persistInterval` and a quarter of `stallTimeout` (never more often than every 50 ms), and
  /// each look wakes two threads, a visible share of a slow download's CPU. A caller that shows
  /// no progress bar sets a second or more.
  public var progressInterval: Duration = .milliseconds(250)
  /// A download with no byte for this long is treated as a lost connection (URLSession's resource
  /// timeout is not enforced on Linux).
  public var stallTimeout: Duration = .seconds(30)
  /// How failed attempts are retried (in a segmented download, each connection's own attempts:
  /// a connection gives up after this many failures in a row that brought no byte).
  public var retry = RetryPolicy()
  /// How many connections fetch the file at once, from 1 (the default: one request at a time,
  /// appending) to 16 (`connectionRange`); values outside are clamped.
  ///
  /// With more than one, the first request asks for `bytes=R-` (R: the prefix on disk); when the
  /// server answers 206 with the complete length and a strong validator (ETag, else
  /// Last-Modified), the rest is cut into segments fetched concurrently, each written at its offset
  /// into one partial file allocated to the complete length, and a connection that finishes takes
  /// over the back half of the largest segment left. Any other answer goes on over one connection
  /// (reported as `DownloadEvent.singleConnection`). Resume data records the segments on disk
  /// under `ResumeDataKitSegments`, so a download resumed from it, with any count, continues every
  /// segment.
  public var connections = 1
  /// The connections allowed, 1 to 16.
  public static let connectionRange = 1...16
  /// Segments are not split below this many bytes (a connection's request costs a round trip;
  /// a small remainder is left to the connection already fetching it).
  public var minimumSegmentSize: Int64 = 1 << 20
  /// How many received chunks (16 KiB each) URLSession may hold for the download (the URLSession
  /// engine only: libcurl hands one piece over at a time and waits for it). On Linux
  /// URLSession queues every chunk for its delegate however far the delegate lags; past this
  /// bound, the thread that runs libcurl waits for the delegate, so libcurl stops reading and TCP
  /// holds the server back. This is what keeps memory flat when the disk (or the digest, or a busy
  /// core) is slower than the network. Values below 1 count as 1.
  public var maximumQueuedChunks = 128
  /// Whether the C allocator is asked, every 250 ms while a transfer runs, to hand freed memory
  /// back to the system (glibc's `malloc_trim`). URLSession on Linux allocates a buffer for every
  /// chunk on one thread and frees it on another; glibc keeps such memory in fragmented per-thread
  /// arenas, and a process's resident memory would grow by about 16 MiB per GiB downloaded. The
  /// call affects the whole process (it only returns free pages, but takes the allocator's locks
  /// while it does): an app that manages its own allocator, or cannot afford the pauses, turns
  /// it off. Only the URLSession engine needs it: the curl engine allocates nothing per chunk, and
  /// never trims.
  public var releasesFreeMemory = true
  /// The digest computed over the file as it arrives.
  public var digestAlgorithm: DigestAlgorithm? = .sha256
  /// The digest the finished file must have (lowercase hex of `digestAlgorithm`), if known.
  public var expectedDigest: String?
  /// The form of the resume data produced on pause, cancel and failure.
  public var resumeDataGeneration: ResumeDataGeneration = .keyed
  /// Header fields added to a request made from a URL (a blob's own headers are kept as they are).
  public var headers: [(name: String, value: String)] = []
  /// The HTTP engine: libcurl's multi interface on Linux, URLSession on Apple platforms
  /// (`DownloadEngine.platformDefault`); URLSession can be chosen on Linux too. The rest of the
  /// download behaves the same over either.
  public var engine: DownloadEngine = .platformDefault
  /// A PEM file of certificate authorities to trust for https, in place of the system's (as
  /// curl's `--cacert`): the curl engine, and URLSession on Apple platforms (a server-trust
  /// challenge evaluated against them). FoundationNetworking on Linux cannot: a download with
  /// this set over URLSession there fails at once with `unsupported-engine`.
  public var certificateAuthority: URL?

  /// A configuration keeping partial files in `temporaryDirectory`.
  public init(temporaryDirectory: URL) {
    self.temporaryDirectory = temporaryDirectory
  }
}

/// Retries with exponential backoff and jitter; every retry resumes rather than restarts.
public struct RetryPolicy: Sendable, Hashable {
  /// Attempts in all, the first included.
  public var maximumAttempts = 5
  /// The delay before the first retry; each next one doubles it.
  public var baseDelay: Duration = .milliseconds(500)
  /// The longest delay.
  public var maximumDelay: Duration = .seconds(30)
  /// The fraction of each delay drawn at random (0 none, 1 anywhere from zero to twice it).
  public var jitter = 0.2

  /// Creates a policy.
  public init(
    maximumAttempts: Int = 5, baseDelay: Duration = .milliseconds(500),
    maximumDelay: Duration = .seconds(30), jitter: Double = 0.2
  ) {
    self.maximumAttempts = maximumAttempts
    self.baseDelay = baseDelay
    self.maximumDelay = maximumDelay
    self.jitter = jitter
  }

  /// The delay before retry number `retry` (1 for the first), with `random` in 0...1 for jitter.
  public func delay(beforeRetry retry: Int, random: Double) -> Duration {
    let exponent = min(max(retry - 1, 0), 30)
    let base = min(baseDelay * (1 << exponent), maximumDelay)
    let factor = 1 + jitter * (2 * min(max(random, 0), 1) - 1)
    return base * factor
  }
}

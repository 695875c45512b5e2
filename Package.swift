// swift-tools-version:6.0
import PackageDescription

// Layers point one way: bytes → PropertyList → KeyedArchive → ResumeData → (ResumeDataBatch,
// Downloader) → CLI.

// Apple's platforms: their SDKs ship libxml2 (linked by name, headers found as CXMLShim/shim.c
// says) and CryptoKit, but no libcrypto. Everywhere else: pkg-config's libxml2 and libcrypto.
let applePlatforms: [Platform] = [.macOS, .macCatalyst, .iOS, .tvOS, .watchOS, .visionOS]
let otherPlatforms: [Platform] = [.linux, .android, .windows, .openbsd, .wasi]

let package = Package(
  name: "ResumeDataKit",
  // The lowest systems the code needs: OSAllocatedUnfairLock (Locked.swift, in place of
  // Synchronization's Mutex, which needs macOS 15 / iOS 18) and URL(filePath:) arrived in macOS 13,
  // iOS 16, tvOS 16 and watchOS 9; visionOS has both from 1.0. Typed throws needs the Swift 6 runtime
  // only where a typed-throws function type is used as a generic value, which the compiler rejects
  // for an older deployment target; no Apple SDK was at hand to check that, so these are the floor
  // the APIs set, not systems the package was run on.
  platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
  products: [
    .library(name: "PropertyList", targets: ["PropertyList"]),
    .library(name: "KeyedArchive", targets: ["KeyedArchive"]),
    .library(name: "ResumeData", targets: ["ResumeData"]),
    .library(name: "ResumeDataBatch", targets: ["ResumeDataBatch"]),
    .library(name: "ResumeDataCLI", targets: ["ResumeDataCLI"]),
    .library(name: "Downloader", targets: ["Downloader"]),
    .executable(name: "resumedata", targets: ["resumedata"]),
    .executable(name: "resumedata-bench", targets: ["resumedata-bench"]),
  ],
  targets: [
    // libxml2 only links through this target off Apple platforms (pkg-config gives the header
    // path and the library); no Swift code imports its headers (they clash with Foundation's ICU
    // module on Debian), so the C shim below is the one place that includes them.
    .systemLibrary(
      name: "CLibXML2",
      pkgConfig: "libxml-2.0",
      providers: [.apt(["libxml2-dev"]), .brew(["libxml2"])]
    ),
    .target(
      name: "CXMLShim",
      dependencies: [.target(name: "CLibXML2", condition: .when(platforms: otherPlatforms))],
      linkerSettings: [.linkedLibrary("xml2", .when(platforms: applePlatforms))]
    ),
    // Vector loops in C (base64 in AVX2, chosen at run time; byte scans in SSE2): Swift cannot
    // enable AVX2 per function, and its SIMD types do not reach these instructions.
    .target(
      name: "CVectorLoops"
    ),
    // The one place the core chooses its Foundation (FoundationEssentials where it exists, else
    // Foundation) and its C library; see PortableFoundation.swift.
    .target(
      name: "PortableFoundation"
    ),
    .target(
      name: "PropertyList",
      dependencies: ["PortableFoundation", "CXMLShim", "CVectorLoops"]
    ),
    .target(
      name: "KeyedArchive",
      dependencies: ["PortableFoundation", "PropertyList"]
    ),
    .target(
      name: "ResumeData",
      dependencies: ["PortableFoundation", "PropertyList", "KeyedArchive"]
    ),
    // libcrypto (OpenSSL) only links through this target, off Apple platforms (CryptoKit computes
    // the digests there: Downloader/DigestEngine.swift); the C shim below alone includes its headers.
    .systemLibrary(
      name: "CLibCrypto",
      pkgConfig: "libcrypto",
      providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]
    ),
    .target(
      name: "CCryptoShim",
      dependencies: ["CLibCrypto"]
    ),
    // libcurl (Linux only): the downloader's curl transport, one multi handle's event loop
    // (Downloader/CurlTransport.swift); the C shim below alone includes its headers, whose setters
    // are variadic. Apple platforms keep URLSession, the system's own.
    .systemLibrary(
      name: "CLibCurl",
      pkgConfig: "libcurl",
      providers: [.apt(["libcurl4-openssl-dev"])]
    ),
    .target(
      name: "CCurlShim",
      dependencies: [.target(name: "CLibCurl", condition: .when(platforms: [.linux]))]
    ),
    // Where a path given for output leads (links followed, devices written into, files replaced
    // atomically), descriptors read whole, and exclusive file locks. Below the batch engine and
    // the downloader, which both read and write files they are given.
    .target(
      name: "OutputFiles",
      dependencies: ["PortableFoundation"]
    ),
    // The only target that imports FoundationNetworking.
    .target(
      name: "Downloader",
      dependencies: [
        "PortableFoundation",
        .target(name: "CCryptoShim", condition: .when(platforms: otherPlatforms)),
        .target(name: "CCurlShim", condition: .when(platforms: [.linux])),
        "PropertyList", "KeyedArchive", "ResumeData", "OutputFiles",
      ]
    ),
    // The batch engine: NDJSON records in, result lines out, on threads of its own; the CLI's
    // `batch` is a front over it.
    .target(
      name: "ResumeDataBatch",
      dependencies: ["PortableFoundation", "PropertyList", "ResumeData", "OutputFiles"]
    ),
    .target(
      name: "ResumeDataCLI",
      dependencies: [
        "PortableFoundation", "PropertyList", "KeyedArchive", "ResumeData", "ResumeDataBatch",
        "Downloader", "OutputFiles",
      ]
    ),
    .executableTarget(
      name: "resumedata",
      dependencies: ["ResumeDataCLI"]
    ),
    .executableTarget(
      name: "resumedata-bench",
      dependencies: ["CXMLShim", "PropertyList", "KeyedArchive", "ResumeData"],
      path: "Benchmarks/resumedata-bench"
    ),
    .target(
      name: "TestSupport",
      path: "Tests/TestSupport"
    ),
    // A loopback HTTP/1.1 server with injectable faults, for tests of code that downloads.
    .target(
      name: "TestHTTPServer",
      path: "Tests/TestHTTPServer"
    ),
    .testTarget(
      name: "DownloaderTests",
      dependencies: [
        "TestSupport", "TestHTTPServer", "Downloader", "ResumeData", "KeyedArchive", "PropertyList",
      ]
    ),
    .testTarget(
      name: "PropertyListTests",
      dependencies: ["TestSupport", "PropertyList", "CVectorLoops"],
      exclude: ["FuzzRegressions"]
    ),
    .testTarget(
      name: "KeyedArchiveTests",
      dependencies: ["TestSupport", "KeyedArchive", "PropertyList"],
      exclude: ["FuzzRegressions"]
    ),
    .testTarget(
      name: "ResumeDataTests",
      dependencies: ["TestSupport", "ResumeData", "KeyedArchive", "PropertyList"],
      exclude: ["FuzzRegressions"]
    ),
    .testTarget(
      name: "ResumeDataBatchTests",
      dependencies: ["TestSupport", "ResumeDataBatch", "ResumeData", "PropertyList"]
    ),
    .testTarget(
      name: "ResumeDataCLITests",
      dependencies: [
        "TestSupport", "TestHTTPServer", "ResumeDataCLI", "PropertyList", "KeyedArchive",
        "ResumeData", "Downloader", "OutputFiles",
      ],
      exclude: ["Snapshots"]
    ),
    .testTarget(
      name: "TestHTTPServerTests",
      dependencies: ["TestHTTPServer"]
    ),
  ],
  swiftLanguageModes: [.v6]
)

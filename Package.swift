// swift-tools-version:6.0
import PackageDescription

// Layers point one way: bytes → PropertyList → KeyedArchive → ResumeData → (ResumeDataBatch,
// Downloader) → CLI.
let package = Package(
  name: "ResumeDataKit",
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
    // libxml2 only links through this target; no Swift code imports its headers (they clash with
    // Foundation's ICU module on Debian), so the C shim below is the one place that includes them.
    .systemLibrary(
      name: "CLibXML2",
      pkgConfig: "libxml-2.0",
      providers: [.apt(["libxml2-dev"]), .brew(["libxml2"])]
    ),
    .target(
      name: "CXMLShim",
      dependencies: ["CLibXML2"]
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
    // libcrypto (OpenSSL) only links through this target; the C shim below alone includes its headers.
    .systemLibrary(
      name: "CLibCrypto",
      pkgConfig: "libcrypto",
      providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]
    ),
    .target(
      name: "CCryptoShim",
      dependencies: ["CLibCrypto"]
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
        "PortableFoundation", "CCryptoShim", "PropertyList", "KeyedArchive", "ResumeData",
        "OutputFiles",
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

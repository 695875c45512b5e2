// swift-tools-version:6.0
import PackageDescription

// Fuzz targets for the property-list readers and the keyed-archive layer, kept out of the main
// build: they only build with `--sanitize=fuzzer`, which links libFuzzer's own `main`. See README.md.
let package = Package(
  name: "ResumeDataKitFuzz",
  dependencies: [
    .package(name: "ResumeDataKit", path: "..")
  ],
  targets: [
    .target(
      name: "FuzzCommon",
      dependencies: [.product(name: "PropertyList", package: "ResumeDataKit")]
    ),
    .executableTarget(
      name: "FuzzBinaryPlist",
      dependencies: ["FuzzCommon"]
    ),
    .executableTarget(
      name: "FuzzXMLPlist",
      dependencies: ["FuzzCommon", .product(name: "PropertyList", package: "ResumeDataKit")]
    ),
    .executableTarget(
      name: "FuzzKeyedArchive",
      dependencies: [
        "FuzzCommon",
        .product(name: "KeyedArchive", package: "ResumeDataKit"),
        .product(name: "PropertyList", package: "ResumeDataKit"),
      ]
    ),
    .executableTarget(
      name: "FuzzResumeData",
      dependencies: [
        "FuzzCommon",
        .product(name: "ResumeData", package: "ResumeDataKit"),
        .product(name: "KeyedArchive", package: "ResumeDataKit"),
        .product(name: "PropertyList", package: "ResumeDataKit"),
      ]
    ),
    .executableTarget(
      name: "FuzzSegmentMap",
      dependencies: [.product(name: "ResumeData", package: "ResumeDataKit")]
    ),
    .executableTarget(
      name: "FuzzProbe",
      dependencies: [.product(name: "Downloader", package: "ResumeDataKit")]
    ),
    .executableTarget(
      name: "FuzzOpenStep",
      dependencies: [.product(name: "PropertyList", package: "ResumeDataKit")]
    ),
    .executableTarget(
      name: "FuzzCapturedForms",
      dependencies: [
        .product(name: "ResumeData", package: "ResumeDataKit"),
        .product(name: "PropertyList", package: "ResumeDataKit"),
      ]
    ),
    .executableTarget(
      name: "FuzzBatch",
      dependencies: [
        "FuzzCommon",
        .product(name: "ResumeDataCLI", package: "ResumeDataKit"),
        .product(name: "PropertyList", package: "ResumeDataKit"),
        .product(name: "KeyedArchive", package: "ResumeDataKit"),
      ]
    ),
  ],
  swiftLanguageModes: [.v6]
)

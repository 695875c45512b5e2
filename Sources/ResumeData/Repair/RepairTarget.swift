/// The system a repaired blob is meant for: repair rules run only when their target needs them.
///
/// The iOS names follow the OS bugs of format reference §5. Each macOS release shares its
/// CFNetwork with an iOS release, so macOS targets are accepted as aliases (see `init(name:)`).
public enum RepairTarget: String, Sendable, Hashable, CaseIterable {
  /// iOS 10.0–10.1 (macOS 10.12.0–10.12.1): reads plain v2 blobs, and request archives only in
  /// the `$N` layout under `root`.
  case ios10Early = "ios10.0-10.1"
  /// iOS 10.2–10.3 (macOS 10.12.2–10.12.6): plain v2 blobs; from 10.3 a resumed task loses its
  /// original request when the blob has none.
  case ios10Late = "ios10.2-10.3"
  /// iOS 11.0–11.2 (macOS 10.13.0–10.13.3): plain v4 blobs; a ByteRange key makes the next resume
  /// complete with a short or empty file.
  case ios11Early = "ios11.0-11.2"
  /// iOS 11.3 and later 11.x (macOS 10.13.4–10.13.6): plain v4 blobs.
  case ios11Late = "ios11.3+"
  /// iOS 12 (macOS 10.14): keyed archives with info version 4; plain blobs still read.
  case ios12
  /// iOS 13 and later (macOS 10.15 and later): keyed archives with info version 5.
  case ios13Later = "ios13+"
  /// Network.framework's URLSession loader: its own masked object form only.
  case networkFramework = "network-framework"
  /// This toolkit's downloader on Linux: reads every generation.
  case linux

  /// The macOS releases that share each target's CFNetwork (by release date [I]).
  public static let macOSAliases: [String: RepairTarget] = [
    "macos10.12-10.12.1": .ios10Early, "macos10.12.2-10.12.6": .ios10Late,
    "macos10.13-10.13.3": .ios11Early, "macos10.13.4+": .ios11Late, "macos10.14": .ios12,
    "macos10.15+": .ios13Later,
  ]

  /// Every name `init(name:)` accepts, iOS names first.
  public static var names: [String] {
    allCases.map(\.rawValue) + macOSAliases.keys.sorted()
  }

  /// A target from its name (case-insensitive), iOS or macOS.
  public init?(name: String) {
    let lowered = name.lowercased()
    guard let target = RepairTarget(rawValue: lowered) ?? Self.macOSAliases[lowered] else {
      return nil
    }
    self = target
  }

  /// Whether the target is an Apple OS's CFNetwork.
  var isCFNetwork: Bool { self != .networkFramework && self != .linux }

  /// The generations the target reads, and the one a blob is converted to when it reads none of
  /// them (first), with the keyed info version it expects.
  var readable: [ResumeDataGeneration] {
    switch self {
    case .ios10Early, .ios10Late: [.v2, .v1]
    case .ios11Early, .ios11Late: [.v4, .v2, .v1]
    case .ios12, .ios13Later: [.keyed, .safari, .v4, .v2, .v1]
    case .networkFramework: [.networkFramework]
    case .linux: ResumeDataGeneration.allCases
    }
  }

  /// The info version a keyed blob for this target carries.
  var keyedInfoVersion: Int? {
    switch self {
    case .ios12: 4
    case .ios13Later: 5
    default: nil
    }
  }
}

extension ResumeDataTool {
  /// The package's version, and the one place it is written: `resumedata --version` prints
  /// `resumedata` and this.
  ///
  /// A release sets it to `MAJOR.MINOR.PATCH`, dates its heading in CHANGELOG.md and tags that
  /// commit with the same text; the commit after a release sets the next version with `-dev`,
  /// so a build between releases never claims to be one. SwiftPM takes a dependency's version
  /// from its git tags alone (Package.swift has none); CI checks that a tag on the commit it
  /// builds equals this (scripts/version-check.sh). See docs/releasing.md.
  public static let version = "0.1.0-dev"
}

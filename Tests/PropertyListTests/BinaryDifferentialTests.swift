import Foundation
import PropertyList
import Testing

/// Foundation's PropertyListSerialization (CoreFoundation's codec on Linux) as the oracle for the
/// binary format: random trees of every type must decode to equal values in both directions.
@Suite("Binary codec against Foundation")
struct BinaryDifferentialTests {
  /// 2,000 seeded trees in 20 batches (batches run in parallel).
  @Test("Random trees agree with Foundation in both directions", arguments: 0..<20)
  func randomTreesAgree(batch: Int) throws {
    for seed in (batch * 100)..<(batch * 100 + 100) {
      var generator = TreeGenerator(seed: UInt64(seed), wholeSecondDates: false)
      generator.includeSinglePrecision = true
      let tree = generator.tree()
      let theirs = try PropertyListSerialization.data(
        fromPropertyList: foundationObject(tree), format: .binary, options: 0)
      #expect(
        try BinaryPropertyListReader().read(theirs) == tree,
        "seed \(seed): ours reading Foundation's")
      let ours = try BinaryPropertyListWriter().write(tree)
      let back = try PropertyListSerialization.propertyList(from: ours, options: [], format: nil)
      #expect(
        propertyListValue(fromFoundation: back) == tree, "seed \(seed): Foundation reading ours")
    }
  }

  /// Foundation writes CoreFoundation's layout; reading its output and writing it again must give
  /// back the same bytes. (Trees hold no repeated scalars: see `TreeGenerator.distinctScalars`.)
  @Test("Foundation-written binary plists re-encode to the same bytes", arguments: 0..<10)
  func foundationBytesRoundTrip(batch: Int) throws {
    for seed in (batch * 100)..<(batch * 100 + 100) {
      var generator = TreeGenerator(seed: UInt64(seed) + 50_000, wholeSecondDates: false)
      generator.distinctScalars = true
      let tree = generator.tree()
      let theirs = try PropertyListSerialization.data(
        fromPropertyList: foundationObject(tree), format: .binary, options: 0)
      let value = try BinaryPropertyListReader().read(theirs)
      let ours = try BinaryPropertyListWriter().write(value)
      #expect(ours == theirs, "seed \(seed)")
    }
  }
}

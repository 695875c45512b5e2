import Foundation
import PropertyList
import TestSupport
import Testing

/// Inputs the fuzzers found (Tests/PropertyListTests/FuzzRegressions), each named for what it pins.
let fuzzRegressions = filesInRepository("Tests/PropertyListTests/FuzzRegressions")

@Suite("Fuzz regressions")
struct FuzzRegressionTests {
  @Test("The regressions folder holds the fuzzers' finds") func present() {
    #expect(fuzzRegressions.count >= 2)
  }

  /// Each input is either refused with a typed error, or reads to a value that survives
  /// encode ⇒ decode in both formats (the fuzz harness's property).
  @Test("Each fuzz find is refused cleanly or round-trips", arguments: fuzzRegressions)
  func replay(name: String) throws {
    let data = try Data(
      contentsOf: repositoryRoot.appendingPathComponent("Tests/PropertyListTests/FuzzRegressions")
        .appendingPathComponent(name))
    let value: PropertyListValue
    do {
      value = try PropertyListValue.decode(data).value
    } catch is PropertyListError {
      return
    }
    for format in PropertyListFormat.allCases {
      #expect(
        try PropertyListValue.decode(try value.encoded(as: format)).value == value, "\(format)")
    }
  }

  @Test("A UID above UInt32.max is refused by the reader and both writers")
  func uidAboveUInt32() {
    let data = hexBytes(
      "62706c6973743030 870000000100000000 08 000000000000 0101 0000000000000001 0000000000000000 0000000000000011"
    )
    #expect {
      _ = try BinaryPropertyListReader().read(data)
    } throws: { error in
      (error as? PropertyListError)?.code == .invalidValue
        && (error as? PropertyListError)?.location == .offset(9)
    }
    for format in PropertyListFormat.allCases {
      #expect(throws: PropertyListError.self) {
        try PropertyListValue.uid(1 << 32).encoded(as: format)
      }
    }
    #expect(throws: Never.self) {
      try PropertyListValue.uid(UInt64(UInt32.max)).encoded(as: .binary)
    }
  }
}

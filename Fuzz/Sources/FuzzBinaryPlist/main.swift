import FuzzCommon

/// libFuzzer's entry point: reads the input as a binary property list and, when it reads, checks
/// that it survives encoding to binary and to XML and reading back.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
  RoundTripHarness.run(UnsafeRawBufferPointer(start: start, count: count), as: .binary)
}

import FuzzCommon

/// libFuzzer's entry point: reads the input as an XML property list and, when it reads, checks
/// that it survives encoding to XML and to binary and reading back.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
  RoundTripHarness.run(UnsafeRawBufferPointer(start: start, count: count), as: .xml)
}

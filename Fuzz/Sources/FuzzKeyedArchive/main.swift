/// libFuzzer's entry point: reads the input as a keyed archive (binary or XML container) and, when
/// it reads, checks that it survives re-encoding, decoding, display, and request editing.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
  KeyedArchiveHarness.run(UnsafeRawBufferPointer(start: start, count: count))
}

import Foundation
import FuzzCommon
@_spi(Differential) import PropertyList

/// libFuzzer's entry point: reads the input as an XML property list and, when it reads, checks
/// that it survives encoding to XML and to binary and reading back. Before that, two checks of
/// the reader's own machinery:
///
/// - the input as the text of a `<data>` element: the reader's decoder (its group loops, its guess
///   at a line's length, text cut where libxml2 might cut it) against a decoder of one character at
///   a time, after decoding the input once uncut (which leaves the guess its layout gives);
/// - two reads of the input in a row give the same value or the same error: each thread keeps its
///   libxml2 parser from one parse to the next, and nothing a parse leaves may change the next.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
  let input = UnsafeRawBufferPointer(start: start, count: count)
  let text = Array(input)
  // Cuts at offsets the input's first bytes choose, so that the fuzzer can move them.
  var cuts: [Int] = []
  for byte in text.prefix(3) where !text.isEmpty { cuts.append(Int(byte) * 31 % (text.count + 1)) }
  if let difference = XMLDataDifferential.difference(text, cuts: cuts.sorted(), earlier: text) {
    fatalError("<data> decoding differs from the reference: \(difference)")
  }
  let first = read(input)
  let second = read(input)
  switch (first, second) {
  case (.success(let one), .success(let other)) where one == other: break
  case (.failure(let one), .failure(let other)) where "\(one)" == "\(other)": break
  default: fatalError("two reads of the same input differ: \(first) then \(second)")
  }
  return RoundTripHarness.run(input, as: .xml)
}

private func read(_ input: UnsafeRawBufferPointer) -> Result<PropertyListValue, any Error> {
  Result { try XMLPropertyListReader().read(Data(input)) }
}

import Foundation
import PropertyList

/// libFuzzer's entry point: reads the input as an OpenStep property list (small limits, so no
/// input makes a run slow) and, when it reads, checks that the writer's text of the value reads
/// back to the same value, written with UTF-8 and with `\U` escapes; that `decodeAnyFormat`
/// gives the same value or an error (never a crash) for text it takes for OpenStep; and that
/// every error of the reader has a line and column within the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
  let data = Data(bytes: start, count: count)
  let limits = PropertyListLimits(
    maximumDepth: 64, maximumObjectCount: 100_000, maximumValueLength: 1 << 20)
  let value: PropertyListValue
  do {
    value = try OpenStepPropertyListReader(limits: limits).read(data)
  } catch let error as PropertyListError {
    if case .lineColumn(let line, let column) = error.location {
      guard line >= 1, column >= 1, line <= count + 1, column <= count + 1 else {
        fatalError("error outside the input (\(line):\(column) in \(count) bytes): \(error)")
      }
    }
    return 0
  } catch {
    fatalError("an error that is not a PropertyListError: \(error)")
  }
  for escaping in [false, true] {
    let text = OpenStepPropertyListWriter(escapingNonASCII: escaping).write(value)
    do {
      let again = try OpenStepPropertyListReader().read(text)
      guard again == value else {
        fatalError(
          "written text reads back differently (escaping: \(escaping)):\n\(value)\n\(again)\n"
            + String(decoding: text, as: UTF8.self))
      }
    } catch {
      fatalError(
        "written text does not read back (escaping: \(escaping)): \(error)\n"
          + String(decoding: text, as: UTF8.self))
    }
  }
  if PropertyListInputFormat.detect(data) == .openStep,
    let (other, format) = try? PropertyListValue.decodeAnyFormat(data, limits: limits),
    format == .openStep, other != value
  {
    fatalError("decodeAnyFormat reads the text differently")
  }
  return 0
}

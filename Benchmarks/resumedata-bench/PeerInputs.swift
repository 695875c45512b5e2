import Foundation
import PropertyList

/// The inputs of `resumedata-bench plist` as files, for peers in other languages to read the same
/// bytes (`plist-inputs`), and our side of a peer's instruction count (`plist-calls`).
enum PeerInputs {
  /// One input of the `plist` benchmark in one format.
  struct PlistInput {
    /// `small-4KB` or `large-10MB`, as the `plist` lines name it.
    var label: String
    /// `binary` or `xml`.
    var format: String
    var bytes: Data
    /// Operations per second for the small input, MB/s of these bytes for the large one.
    var rate: Rate
    /// The file name `plist-inputs` gives it.
    var fileName: String { label + (format == "binary" ? ".bplist" : ".xml") }
  }

  /// The inputs `plist` times, built as it builds them (the same seeded generators, encoded by our
  /// writer in each format): small-4KB and large-10MB, binary and XML, in the order it times them.
  static func plistInputs() throws -> [PlistInput] {
    var inputs: [PlistInput] = []
    for (label, value, rate) in [
      ("small-4KB", Inputs.resumeData(), Rate.perSecond), ("large-10MB", Inputs.large(), nil),
    ] {
      for format in [PropertyListFormat.binary, .xml] {
        let bytes = try value.encoded(as: format)
        inputs.append(
          PlistInput(
            label: label, format: format == .binary ? "binary" : "xml", bytes: bytes,
            rate: rate ?? .megabytesPerSecond(bytes: bytes.count)))
      }
    }
    return inputs
  }

  /// Our reader for a format name.
  static func read(_ bytes: Data, format: String) throws -> PropertyListValue {
    format == "binary"
      ? try BinaryPropertyListReader().read(bytes) : try XMLPropertyListReader().read(bytes)
  }

  /// The values of a property list, counted as the peers count them: every value once, containers
  /// included, dictionary keys not (as `Agreement.difference` visits them).
  static func valueCount(_ value: PropertyListValue) -> Int {
    switch value {
    case .dictionary(let dictionary): return dictionary.reduce(1) { $0 + valueCount($1.value) }
    case .array(let array): return array.reduce(1) { $0 + valueCount($1) }
    default: return 1
    }
  }

  /// `resumedata-bench plist-inputs DIRECTORY`: writes the four inputs of `plist` to DIRECTORY
  /// (made when missing) and prints a line for each: its path, size and value count.
  static func runInputs(_ arguments: [String]) -> Int32 {
    let hint = "resumedata-bench plist-inputs DIRECTORY"
    if arguments.first == "-h" || arguments.first == "--help" {
      print(
        """
        USAGE: \(hint)

        Writes the property lists `resumedata-bench plist` times, byte for byte, to DIRECTORY
        (made when missing), for peers in other languages to read the same inputs:
        small-4KB.bplist, small-4KB.xml, large-10MB.bplist and large-10MB.xml. Prints a line for
        each: its path, its size and its values (containers included, dictionary keys not).
        """)
      return 0
    }
    guard arguments.count == 1 else {
      return usageError("plist-inputs needs a directory", hint: hint)
    }
    let directory = URL(fileURLWithPath: arguments[0])
    do {
      try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
      for input in try plistInputs() {
        let file = directory.appendingPathComponent(input.fileName)
        try input.bytes.write(to: file)
        let values = valueCount(try read(input.bytes, format: input.format))
        print("\(file.path): \(size(input.bytes.count)), \(grouped(Double(values))) values")
      }
    } catch {
      printError("Error: \(directory.path): could not write the inputs: \(describe(error))")
      return 1
    }
    return 0
  }

  /// `resumedata-bench plist-calls FILE binary|xml decode|encode COUNT`: COUNT decodes (each value
  /// freed) or encodes (of the list decoded once) of FILE with our codec, timing nothing, for
  /// callgrind to count against a COUNT of 0 (not in the help: `peers` runs it).
  static func runCalls(_ arguments: [String]) -> Int32 {
    guard arguments.count == 4, ["binary", "xml"].contains(arguments[1]),
      ["decode", "encode"].contains(arguments[2]), let count = Int(arguments[3]), count >= 0
    else {
      return usageError(
        "plist-calls needs a file, binary or xml, decode or encode, and a count",
        hint: "resumedata-bench plist-calls FILE binary|xml decode|encode COUNT")
    }
    guard let bytes = FileManager.default.contents(atPath: arguments[0]) else {
      printError("Error: \(arguments[0]): cannot be read")
      return 66
    }
    let format = arguments[1]
    do {
      let value = try read(bytes, format: format)
      let encoding: PropertyListFormat = format == "binary" ? .binary : .xml
      for _ in 0..<count {
        if arguments[2] == "decode" {
          blackHole(try read(bytes, format: format))
        } else {
          blackHole(try value.encoded(as: encoding))
        }
      }
    } catch {
      printError("Error: \(arguments[0]): \(describe(error))")
      return 65
    }
    return 0
  }
}

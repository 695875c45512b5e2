import Foundation
import PropertyList
import ResumeDataCLI
import TestSupport
import Testing

func fixturePath(_ name: String) -> String {
  repositoryRoot.appendingPathComponent("Fixtures/plist").appendingPathComponent(name).path
}

/// Captured output of one in-process run of the tool.
final class Captured: @unchecked Sendable {
  private let lock = NSLock()
  private var out = Data()
  private var err = Data()

  var standardOutput: Data { lock.withLock { out } }
  var standardError: String { lock.withLock { String(decoding: err, as: UTF8.self) } }

  func streams(input: Data = Data(), terminal: Bool = false) -> Streams {
    Streams(
      readStandardInput: { input },
      writeStandardOutput: { data in self.lock.withLock { self.out.append(data) } },
      writeStandardError: { data in self.lock.withLock { self.err.append(data) } },
      standardOutputIsTerminal: terminal)
  }
}

func run(_ arguments: [String], input: Data = Data(), terminal: Bool = false) -> (
  ExitCode, Captured
) {
  let captured = Captured()
  let status = ResumeDataTool.run(
    arguments, streams: captured.streams(input: input, terminal: terminal))
  return (status, captured)
}

@Suite("resumedata plist")
struct PlistCommandTests {
  @Test(
    "Converting a Foundation-made plist to its own format reproduces its bytes",
    arguments: [
      ("foundation-types.xml.plist", "xml"), ("foundation-types.binary.plist", "binary"),
      ("resume-shaped.xml.plist", "xml"), ("resume-shaped.binary.plist", "binary"),
    ])
  func ownFormat(file: String, format: String) throws {
    let (status, captured) = run(["plist", fixturePath(file), "--to", format])
    #expect(status == .success)
    #expect(captured.standardError == "")
    #expect(
      captured.standardOutput == (try Data(contentsOf: URL(fileURLWithPath: fixturePath(file)))))
  }

  @Test("XML to binary gives Foundation's binary bytes, and back")
  func crossFormat() throws {
    let xml = try Data(contentsOf: URL(fileURLWithPath: fixturePath("resume-shaped.xml.plist")))
    let binary = try Data(
      contentsOf: URL(fileURLWithPath: fixturePath("resume-shaped.binary.plist")))
    let toBinary = run(["plist", "-", "--to", "binary"], input: xml)
    #expect(toBinary.0 == .success)
    // Foundation's binary output orders dictionary keys by hash, its XML by name; compare values.
    #expect(
      try PropertyListValue.decode(toBinary.1.standardOutput).value
        == (try PropertyListValue.decode(binary).value))
    let toXML = run(["plist", "-", "--to", "xml"], input: binary)
    #expect(toXML.1.standardOutput == xml)
  }

  @Test("Typed JSON keeps every type")
  func json() throws {
    let input = try PropertyListValue.dictionary([
      "i": .integer(PropertyListInteger(UInt64.max)), "f": .real(PropertyListReal(Float(0.5))),
      "u": .uid(3), "d": .date(Date(timeIntervalSinceReferenceDate: 0)), "b": .data(Data([1, 2])),
      "s": .string("a\"b\n"), "a": .array([.boolean(false)]),
    ]).encoded(as: .binary)
    let (status, captured) = run(["plist", "-", "--to", "json"], input: input)
    #expect(status == .success)
    #expect(
      String(decoding: captured.standardOutput, as: UTF8.self) == """
        {
          "schemaVersion": 1,
          "format": "binary",
          "value": {"dict": {
            "i": {"integer": 18446744073709551615},
            "f": {"real": 0.5, "bits": 32},
            "u": {"uid": 3},
            "d": {"date": "2001-01-01T00:00:00Z", "seconds": 0.0},
            "b": {"data": "AQI="},
            "s": {"string": "a\\"b\\n"},
            "a": {"array": [
              {"bool": false}
            ]}
          }}
        }

        """)
  }

  @Test(
    "Errors name the file and where, with the documented exit status",
    arguments: [
      (
        ["plist", fixturePath("hostile/cycle.binary.plist")], ExitCode.malformedInput,
        "Error: \(fixturePath("hostile/cycle.binary.plist")):@18: object 3 contains itself (reference cycle)\n"
      ),
      (
        ["plist", fixturePath("hostile/xxe-local-file.plist")], .malformedInput,
        "Error: \(fixturePath("hostile/xxe-local-file.plist")):2: a DOCTYPE internal subset is not allowed (it could declare entities)\n"
      ),
      (
        ["plist", "/nonexistent/file.plist"], .unreadableInput,
        "Error: /nonexistent/file.plist: no such file\n"
      ),
      (["plist", "/"], .unreadableInput, "Error: /: is a directory\n"),
      (
        ["plist"], .usage,
        "Error: plist needs a FILE (or - for standard input)\nRun 'resumedata plist --help' for usage.\n"
      ),
      (
        ["plist", "x", "--to", "yaml"], .usage,
        "Error: --to must be xml, binary, json or openstep, not 'yaml'\nRun 'resumedata plist --help' for usage.\n"
      ),
      (
        ["plist", "x", "--bogus"], .usage,
        "Error: unknown option '--bogus'\nRun 'resumedata plist --help' for usage.\n"
      ),
      (
        ["frobnicate"], .usage,
        "Error: unknown subcommand 'frobnicate'\nRun 'resumedata --help' for usage.\n"
      ),
    ] as [([String], ExitCode, String)])
  func errors(arguments: [String], status: ExitCode, message: String) {
    let (actual, captured) = run(arguments)
    #expect(actual == status)
    #expect(captured.standardError == message)
    #expect(captured.standardOutput.isEmpty)
  }

  @Test("JSON input is refused by name; OpenStep text is read, and written")
  func otherFormats() {
    let json = run(["plist", "-"], input: Data("{\"a\": 1}".utf8))
    #expect(json.0 == .malformedInput)
    #expect(
      json.1.standardError
        == "Error: -:@0: input looks like JSON, which is not a property-list format this tool reads\n"
    )
    let openStep = run(["plist", "-", "--json"], input: Data("{ a = 1; b = <01ff>; }".utf8))
    #expect(openStep.0 == .success)
    #expect(
      text(openStep.1.standardOutput) == """
        {
          "schemaVersion": 1,
          "format": "openstep",
          "value": {"dict": {
            "a": {"string": "1"},
            "b": {"data": "Af8="}
          }}
        }

        """)
    let broken = run(["plist", "-"], input: Data("{ a = 1;\n b = (; }".utf8))
    #expect(broken.0 == .malformedInput)
    #expect(
      broken.1.standardError
        == "Error: -:2:7: expected ',' or ')' in an array, not ';'\n")
    let written = run(
      ["plist", fixturePath("resume-shaped.xml.plist"), "--to", "openstep"])
    #expect(written.0 == .success)
    #expect(text(written.1.standardOutput).hasPrefix("{\n    NSURLSessionDownloadURL = "))
  }

  @Test("Help and version go to standard output and exit 0")
  func helpAndVersion() {
    for arguments in [["--help"], ["plist", "--help"], ["--version"]] {
      let (status, captured) = run(arguments)
      #expect(status == .success)
      #expect(captured.standardError == "")
      #expect(!captured.standardOutput.isEmpty)
    }
    #expect(
      String(decoding: run(["--version"]).1.standardOutput, as: UTF8.self)
        == "resumedata \(ResumeDataTool.version)\n")
  }

  @Test("Binary output is not written to a terminal")
  func binaryToTerminal() {
    let (status, captured) = run(
      ["plist", fixturePath("resume-shaped.xml.plist"), "--to", "binary"], terminal: true)
    #expect(status == .usage)
    #expect(captured.standardOutput.isEmpty)
  }

  @Test("-o writes the file, and a failed conversion leaves an existing output untouched")
  func outputFile() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "plist-cli-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let output = directory.appendingPathComponent("out.plist").path
    #expect(
      run(["plist", fixturePath("resume-shaped.xml.plist"), "--to", "binary", "-o", output]).0
        == .success)
    let written = try Data(contentsOf: URL(fileURLWithPath: output))
    #expect(try PropertyListValue.decode(written).format == .binary)
    #expect(
      run(["plist", fixturePath("hostile/truncated.binary.plist"), "-o", output]).0
        == .malformedInput)
    #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == written)
    let unwritable = run([
      "plist", fixturePath("resume-shaped.xml.plist"), "-o", directory.path + "/missing/out.plist",
    ])
    #expect(unwritable.0 == .failure)
  }
}

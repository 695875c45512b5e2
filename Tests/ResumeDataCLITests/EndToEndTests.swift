import Foundation
import ResumeData
import Testing

/// The built `resumedata` executable, next to the test bundle in the build folder.
let executable: URL = {
  var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
  // On Linux the test binary is `.build/<triple>/debug/<Package>PackageTests.xctest`.
  if directory.lastPathComponent.hasSuffix(".xctest") { directory.deleteLastPathComponent() }
  return directory.appendingPathComponent("resumedata")
}()

/// Runs the built tool with arguments and standard input; returns status, standard output and error.
func runExecutable(_ arguments: [String], input: Data = Data()) throws -> (Int32, Data, String) {
  let process = Process()
  process.executableURL = executable
  process.arguments = arguments
  let stdin = Pipe()
  let stdout = Pipe()
  let stderr = Pipe()
  process.standardInput = stdin
  process.standardOutput = stdout
  process.standardError = stderr
  try process.run()
  stdin.fileHandleForWriting.write(input)
  try stdin.fileHandleForWriting.close()
  let output = stdout.fileHandleForReading.readDataToEndOfFile()
  let error = stderr.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  return (process.terminationStatus, output, String(decoding: error, as: UTF8.self))
}

/// Runs the real executable, as a user would, and compares exact output and exit status.
@Suite("resumedata executable")
struct EndToEndTests {
  @Test("The executable is built") func built() {
    #expect(
      FileManager.default.isExecutableFile(atPath: executable.path),
      "\(executable.path) missing: run swift build")
  }

  @Test("Converting from standard input to standard output")
  func pipe() throws {
    let xml = try Data(contentsOf: URL(fileURLWithPath: fixturePath("resume-shaped.xml.plist")))
    let (status, output, error) = try runExecutable(["plist", "-", "--to", "xml"], input: xml)
    #expect(status == 0)
    #expect(error == "")
    #expect(output == xml)
  }

  @Test("A malformed input exits 65 with the offset on standard error")
  func malformed() throws {
    let path = fixturePath("hostile/cycle.binary.plist")
    let (status, output, error) = try runExecutable(["plist", path])
    #expect(status == 65)
    #expect(output.isEmpty)
    #expect(error == "Error: \(path):@18: object 3 contains itself (reference cycle)\n")
  }

  @Test("No arguments is a usage error with help on standard error")
  func noArguments() throws {
    let (status, output, error) = try runExecutable([])
    #expect(status == 64)
    #expect(output.isEmpty)
    #expect(error.hasSuffix("Error: missing subcommand\nRun 'resumedata --help' for usage.\n"))
  }

  @Test("repair: the blob to standard output, what changed to standard error")
  func repair() throws {
    let (status, output, error) = try runExecutable(
      ["repair", "-", "--target", "ios11.0-11.2", "-o", "-"],
      input: try resumeFixture("v4-byte-range.xml.plist"))
    #expect(status == 0)
    #expect(
      error
        == "info remove-byte-range: removed NSURLSessionResumeByteRange (1048576-) (NSURLSessionResumeByteRange)\n"
    )
    let repaired = try ResumeData(decoding: output)
    #expect(repaired.generation == .v4)
    #expect(repaired.byteRange == nil)
  }

  @Test("convert: the blob to a file, what changed to standard output")
  func convert() throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let path = scratch.path("out.archive")
    let (status, output, error) = try runExecutable([
      "convert", resumeFixturePath("v2.xml.plist"), "--to", "keyed", "-o", path,
    ])
    #expect(status == 0)
    #expect(error == "")
    #expect(
      text(output)
        == "info converted: converted from v2 (xml-plist) to keyed (keyed-archive), info version 5\n"
    )
    let converted = try decodedResume(at: path)
    #expect(converted.generation == .keyed)
    #expect(converted.container == .keyedArchive)
  }

  @Test("edit: an invalid URL is a usage error and writes nothing")
  func edit() throws {
    let (status, output, error) = try runExecutable(
      ["edit", "-", "-o", "-", "--url", "file:///etc/passwd"],
      input: try resumeFixture("v2.xml.plist"))
    #expect(status == 64)
    #expect(output.isEmpty)
    #expect(
      error
        == "Error: \"file:///etc/passwd\" is not an absolute http or https URL\nRun 'resumedata edit --help' for usage.\n"
    )
  }

  @Test("validate: one line a file and the worst status")
  func validate() throws {
    let ok = resumeFixturePath("keyed-v5-unknown-key.archive")
    let (status, output, error) = try runExecutable(
      ["validate", ok, "-"], input: Data("<plist".utf8))
    #expect(status == 65)
    #expect(error == "")
    #expect(text(output).hasPrefix("\(ok): ok (keyed)\n-: malformed: "))
    #expect(text(output).split(separator: "\n").count == 2)
  }
}

import Foundation
import PropertyList
import ResumeData
import ResumeDataCLI
import Testing

@Suite("resumedata convert")
struct ConvertCommandTests {
  /// Every fixture, converted through v2 and through keyed.
  static let roundTrips = resumeFixtureGenerations.flatMap { fixture in
    [ResumeDataGeneration.v2, .keyed].map { (fixture.file, fixture.generation, $0) }
  }

  @Test(
    "Every fixture converts to v2 and to keyed and back, keeping URL, byte count and ETag",
    arguments: roundTrips)
  func roundTrip(
    file: String, generation: ResumeDataGeneration, through: ResumeDataGeneration
  ) throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    // v1, Safari and WebKit blobs name the partial file by absolute path: give its directory.
    let directory = ["--temp-dir", scratch.url.path]
    let middle = scratch.path("middle")
    let back = scratch.path("back")
    let there = run(
      ["convert", resumeFixturePath(file), "--to", through.rawValue, "-o", middle] + directory)
    #expect(there.0 == .success, "\(there.1.standardError)")
    let converted = try decodedResume(at: middle)
    #expect(converted.generation == through)
    let again = run(["convert", middle, "--to", generation.rawValue, "-o", back] + directory)
    #expect(again.0 == .success, "\(again.1.standardError)")
    let original = try ResumeData(decoding: resumeFixture(file))
    let result = try decodedResume(at: back)
    #expect(result.generation == generation)
    for blob in [converted, result] {
      #expect(blob.downloadURL == original.downloadURL)
      #expect(blob.bytesReceived == original.bytesReceived)
      #expect(blob.entityTag == original.entityTag)
      #expect(blob.currentRequest?.url == original.currentRequest?.url)
    }
  }

  @Test("The findings say what was converted, derived and left out")
  func findings() throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let (status, captured) = run([
      "convert", resumeFixturePath("v4-byte-range.xml.plist"), "--to", "v2", "-o",
      scratch.path("out.plist"),
    ])
    #expect(status == .success)
    #expect(
      text(captured.standardOutput) == """
        info converted: converted from v4 (xml-plist) to v2 (xml-plist), info version 2
        warning conversion-dropped: NSURLSessionResumeByteRange cannot be carried by v2 and was left out (NSURLSessionResumeByteRange)

        """)
    #expect(captured.standardError == "")
  }

  @Test(
    "--format and --info-version choose the container and the keyed version",
    arguments: [
      (["--to", "v2", "--format", "binary"], ResumeDataContainer.binaryPlist, 2),
      (["--to", "keyed", "--format", "xml"], .keyedArchiveXML, 5),
      (["--to", "keyed", "--info-version", "4"], .keyedArchive, 4),
      (["--to", "v4", "--info-version", "9"], .xmlPlist, 4),
    ] as [([String], ResumeDataContainer, Int)])
  func formatAndVersion(options: [String], container: ResumeDataContainer, infoVersion: Int)
    throws
  {
    let (status, captured) = run(
      ["convert", "-", "-o", "-"] + options, input: try resumeFixture("v2.xml.plist"))
    #expect(status == .success)
    let blob = try ResumeData(decoding: captured.standardOutput)
    #expect(blob.container == container)
    #expect(blob.infoVersion == infoVersion)
  }

  @Test("A blob already in the form asked for is written back byte for byte")
  func sameForm() throws {
    let (status, captured) = run(
      ["convert", "-", "--to", "keyed", "-o", "-"],
      input: try resumeFixture("keyed-v5-unknown-key.archive"))
    #expect(status == .success)
    #expect(captured.standardOutput == (try resumeFixture("keyed-v5-unknown-key.archive")))
    #expect(captured.standardError == "no changes needed\n")
  }

  @Test(
    "A conversion the blob cannot give exits 1 with the library's reason",
    arguments: [
      (
        ["--to", "v1"],
        "NSURLSessionResumeInfoLocalPath: the target names the partial file by absolute path: give the directory that holds CFNetworkDownload_a1b2c3.tmp"
      ),
      (
        ["--to", "network-framework", "--format", "xml"],
        "Network.framework blobs are binary archives; XML is not a form of them"
      ),
    ])
  func unsupported(options: [String], message: String) throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let output = scratch.path("out")
    let input = resumeFixturePath("v2.xml.plist")
    let (status, captured) = run(["convert", input, "-o", output] + options)
    #expect(status == .failure)
    #expect(captured.standardOutput.isEmpty)
    #expect(captured.standardError == "Error: \(input): \(message)\n")
    #expect(!FileManager.default.fileExists(atPath: output))
  }

  @Test("--json reports the converted blob")
  func json() throws {
    let (status, captured) = run(
      ["convert", "-", "--to", "network-framework", "-o", "-", "--json"],
      input: try resumeFixture("v2.binary.plist"))
    #expect(status == .success)
    #expect(try ResumeData(decoding: captured.standardOutput).generation == .networkFramework)
    #expect(
      captured.standardError == """
        {
          "schemaVersion": 1,
          "input": "-",
          "output": "-",
          "written": true,
          "generation": "network-framework",
          "container": "nw-archive",
          "infoVersion": null,
          "findings": [
            {"code": "converted", "severity": "info", "message": "converted from v2 (binary-plist) to network-framework (nw-archive)", "path": ""},
            {"code": "conversion-derived", "severity": "info", "message": "response made to hold the validators, which Network.framework keeps only there: an NSHTTPURLResponse (status 200) in this toolkit's field layout, as CFNetwork's is not public", "path": "response"},
            {"code": "conversion-dropped", "severity": "warning", "message": "NSURLSessionResumeBytesReceived cannot be carried by network-framework and was left out", "path": "NSURLSessionResumeBytesReceived"}
          ]
        }

        """)
  }
}

import Foundation
import KeyedArchive
import PropertyList
import ResumeData
import TestSupport
import Testing

@Suite("Blob containers")
struct BlobContainerTests {
  @Test(
    "Key paths read as --at writes them and print in one canonical spelling",
    arguments: [
      ("tasks[2].resumeData", "tasks[2].resumeData"), ("$.data", "data"), ("$", "$"),
      ("[0].resumeData", "[0].resumeData"), ("$[1]['a.b']", "[1][\"a.b\"]"),
      ("[\"a\\\"b\"].c", "[\"a\\\"b\"].c"), ("$.tasks[10].super", "tasks[10].super"),
    ])
  func keyPaths(_ text: String, _ canonical: String) throws {
    let path = try ContainerKeyPath(parsing: text)
    #expect(path.description == canonical)
    #expect(try ContainerKeyPath(parsing: canonical) == path)
  }

  @Test(
    "Key paths that do not read say where",
    arguments: [
      ("tasks[", "the key path \"tasks[\" does not read at 7: '[' without ']'"),
      (
        "a[b]",
        "the key path \"a[b]\" does not read at 3: an index is a whole number in brackets, as [2]"
      ),
      ("a.", "the key path \"a.\" does not read at 3: a '.' without a key after it"),
      ("[0]x", "the key path \"[0]x\" does not read at 4: expected '.' or '[' before \"x\""),
    ])
  func badKeyPaths(_ text: String, _ message: String) {
    #expect(throws: ResumeDataError(.invalidEdit, message, at: "")) {
      try ContainerKeyPath(parsing: text)
    }
  }

  @Test("Tiercel's task list, background_downloader's and Expo's JSON give their blobs")
  func fixtures() throws {
    let tiercel = try #require(
      try BlobContainer.scan(try fixture("containers/tiercel-tasks.plist")))
    #expect(tiercel.format == .binaryPlist)
    #expect(tiercel.blobs.map(\.keyPath.description) == ["[0].resumeData", "[1].resumeData"])
    #expect(try tiercel.blobs[0].result.get().bytes == (try fixture("resume/v2.xml.plist")))
    #expect(try tiercel.blobs[1].result.get().bytes == (try fixture("resume/keyed-v4.archive")))
    let flutter = try #require(
      try BlobContainer.scan(try fixture("containers/background-downloader.json")))
    #expect(flutter.format == .json)
    #expect(flutter.blobs.map(\.keyPath.description) == ["data"])
    #expect(try flutter.blobs[0].result.get().bytes == (try fixture("resume/keyed-v4.archive")))
    #expect(try flutter.blobs[0].result.get().form == .base64)
    let expo = try #require(try BlobContainer.scan(try fixture("containers/expo-pause-state.json")))
    #expect(expo.blobs.map(\.keyPath.description) == ["resumeData"])
    #expect(
      try expo.blobs[0].result.get().bytes == (try fixture("resume/keyed-v5-response.archive")))
    let android = try #require(
      try BlobContainer.scan(try fixture("containers/android-resume.json")))
    #expect(android.blobs.isEmpty)
    // A blob is no container of its request archives: callers read it as a blob first, and a
    // scan of one finds nothing named like resume data in it that reads as a blob.
    #expect(try BlobContainer.scan(Data("not json".utf8)) == nil)
  }

  @Test("An app's keyed archive: key paths through its objects' fields")
  func keyedArchive() throws {
    let blob = try fixture("resume/v2.xml.plist")
    func item(_ url: String, _ resume: ArchivedValue) -> ArchivedValue {
      .object(
        ArchivedObject(
          classChain: ["DownloadItem", "NSObject"],
          fields: [
            ArchivedField("url", .reference(.string(url))),
            ArchivedField("resumeData", .reference(resume)),
            ArchivedField("progress", .inline(.real(PropertyListReal(0.25)))),
          ]))
    }
    let archive = try KeyedArchive(
      root: .dictionary([
        ArchivedDictionaryEntry(
          .string("items"),
          .array([
            item("https://example.com/a", .data(blob)), item("https://example.com/b", .null),
            item("https://example.com/c", .data(Data("bplist00 cut".utf8))),
          ]))
      ])
    ).encoded()
    let container = try #require(try BlobContainer.scan(archive))
    #expect(container.format == .keyedArchive)
    #expect(
      container.blobs.map(\.keyPath.description) == ["items[0].resumeData", "items[2].resumeData"])
    #expect(try container.blobs[0].result.get().bytes == blob)
    if case .failure(let error) = container.blobs[1].result {
      #expect(error.code == .propertyList)
    } else {
      Issue.record("read")
    }
  }

  @Test(
    "A value under a resume key that does not read is listed with its error; JSON errors say where")
  func failures() throws {
    let json = """
      {"a": {"resumeData": "{length = 9955, bytes = 0x62706c69 73743030 ... 00002637 }"},
       "b": {"resumeData": "YnBsaXN0MDDUAQIDBAUGYmNYJHZlcnNpb25Y"}, "c": "hello"}
      """
    let container = try #require(try BlobContainer.scan(Data(json.utf8)))
    #expect(container.blobs.map(\.keyPath.description) == ["a.resumeData", "b.resumeData"])
    if case .failure(let error) = container.blobs[0].result {
      #expect(error.code == .elidedDescription)
    } else {
      Issue.record("read")
    }
    if case .failure(let error) = container.blobs[1].result {
      #expect(error.code == .propertyList)
    } else {
      Issue.record("read")
    }
    #expect(
      throws: PropertyListError(
        .malformed, "expected ':' after a member name", at: .lineColumn(line: 2, column: 10))
    ) {
      try BlobContainer.scan(Data("{\"a\": 1\n   , \"b\" 2}".utf8))
    }
  }
}

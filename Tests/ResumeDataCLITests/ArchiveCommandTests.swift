import Foundation
import KeyedArchive
import PropertyList
import ResumeDataCLI
import TestSupport
import Testing

func archiveFixturePath(_ name: String) -> String {
  repositoryRoot.appendingPathComponent("Fixtures/archive").appendingPathComponent(name).path
}

/// Every file under Fixtures/archive that reads as a keyed archive.
let archiveFixtures: [String] = {
  let root = repositoryRoot.appendingPathComponent("Fixtures/archive")
  guard let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
  else { return [] }
  var paths = [String]()
  for case let url as URL in enumerator
  where !url.hasDirectoryPath && url.pathExtension == "archive" {
    paths.append(String(url.path.dropFirst(root.path.count + 1)))
  }
  return paths.sorted()
}()

@Suite("resumedata archive")
struct ArchiveCommandTests {
  @Test("A request archive prints readably, each slot with its UID and value")
  func text() {
    let (status, captured) = run([
      "archive", archiveFixturePath("request/no-http-message-16-slots.archive"),
    ])
    #expect(status == .success)
    #expect(
      String(decoding: captured.standardOutput, as: UTF8.self) == """
        NSKeyedArchiver archive, binary, 12 objects
        NSKeyedArchiveRootObjectKey: @1 NSMutableURLRequest (NSURLRequest : NSObject)
          $0: 2
          $1: 9
          $2: 16
          __nsurlrequest_proto_prop_obj_0: @2 true
          __nsurlrequest_proto_prop_obj_1: @3 NSURL (NSObject)
            NS.base: nil
            NS.relative: @4 "https://example.com/files/archive.zip"
          __nsurlrequest_proto_prop_obj_2: @6 60.0
          __nsurlrequest_proto_prop_obj_3: @7 0
          __nsurlrequest_proto_prop_obj_4: nil
          __nsurlrequest_proto_prop_obj_5: @2 true
          __nsurlrequest_proto_prop_obj_6: @7 0
          __nsurlrequest_proto_prop_obj_7: nil
          __nsurlrequest_proto_prop_obj_8: nil
          __nsurlrequest_proto_prop_obj_9: @2 true
          __nsurlrequest_proto_prop_obj_10: @8 false
          __nsurlrequest_proto_prop_obj_11: @7 0
          __nsurlrequest_proto_prop_obj_12: @9 0.0
          __nsurlrequest_proto_prop_obj_13: @9 0.0
          __nsurlrequest_proto_prop_obj_14: @7 0
          __nsurlrequest_proto_prop_obj_15: @10 -1
          __nsurlrequest_proto_props: nil

        """)
  }

  @Test("A request archive inside a data value is decoded too, marked as nested")
  func nested() throws {
    let request = try Data(
      contentsOf: URL(fileURLWithPath: archiveFixturePath("request/get-22-slots.archive")))
    let outer = try KeyedArchive(
      root: .dictionary(
        [ArchivedDictionaryEntry(.string("NSURLSessionResumeCurrentRequest"), .data(request))],
        mutable: true)
    ).encoded()
    let (status, captured) = run(["archive", "-"], input: outer)
    #expect(status == .success)
    let text = String(decoding: captured.standardOutput, as: UTF8.self)
    #expect(text.contains("    [0]: @3 <\(request.count) bytes: nested NSKeyedArchiver archive>\n"))
    #expect(
      text.contains("\n          NS.relative: @4 \"https://example.com/files/archive.zip\"\n"))
  }

  @Test("Every archive fixture prints as text and as valid JSON", arguments: archiveFixtures)
  func everyFixture(path: String) throws {
    let (status, captured) = run(["archive", archiveFixturePath(path)])
    if path.hasPrefix("hostile/") {
      #expect(status == .malformedInput || status == .success)
      return
    }
    #expect(status == .success)
    #expect(!captured.standardOutput.isEmpty)
    let json = run(["archive", archiveFixturePath(path), "--json"])
    #expect(json.0 == .success)
    let parsed = try JSONSerialization.jsonObject(with: json.1.standardOutput) as? [String: Any]
    #expect(parsed?["schemaVersion"] as? Int == 1)
  }

  @Test("A malformed archive is reported with its key path and exit 65")
  func malformed() throws {
    var objects: [PropertyListValue] = [.string("$null"), .dictionary(["$class": .uid(1)])]
    objects[1] = .dictionary(["$class": .uid(1)])
    let plist = PropertyListValue.dictionary([
      "$archiver": .string("NSKeyedArchiver"), "$version": .integer(PropertyListInteger(100_000)),
      "$top": .dictionary(["root": .uid(1)]), "$objects": .array(objects),
    ])
    let (status, captured) = run(["archive", "-"], input: try plist.encoded(as: .binary))
    #expect(status == .malformedInput)
    #expect(
      captured.standardError
        == "Error: -: $objects[1].$class: names object 1, an instance, not a class object\n")
  }
}

import Foundation
import ResumeData
import TestSupport
import Testing

/// One damage done to a fixture, and the error decoding it must give: its code and description
/// (the location — line, byte offset or key path — then the message).
struct Mutation: CustomTestStringConvertible, Sendable {
  let name: String
  let fixture: String
  let mutate: @Sendable (Data) -> Data
  let code: ResumeDataError.Code
  let description: String

  var testDescription: String { "\(fixture): \(name)" }

  /// Replaces the first occurrence of `text` (which must be there) in a textual fixture.
  static func replacing(_ text: String, with replacement: String) -> @Sendable (Data) -> Data {
    { data in
      let string = String(decoding: data, as: UTF8.self)
      guard let range = string.range(of: text) else { return Data("missing \(text)".utf8) }
      return Data(string.replacingCharacters(in: range, with: replacement).utf8)
    }
  }

  /// Sets the byte `offset` bytes before the end (the binary trailer's fields are there).
  static func settingFromEnd(_ offset: Int, to value: UInt8) -> @Sendable (Data) -> Data {
    { data in
      var data = data
      data[data.endIndex - offset] = value
      return data
    }
  }

  /// Replaces the first occurrence of `bytes` (which must be there) in a binary fixture.
  static func patching(_ bytes: String, with replacement: String) -> @Sendable (Data) -> Data {
    { data in
      guard let range = data.firstRange(of: Data(bytes.utf8)) else { return Data() }
      var data = data
      data.replaceSubrange(range, with: Data(replacement.utf8))
      return data
    }
  }
}

/// A table of damage per container: each fails with a typed error that says where.
@Suite("Resume data mutation table")
struct MutationTableTests {
  static let mutations: [Mutation] = [
    // XML property list (v2).
    Mutation(
      name: "an element misspelled", fixture: "v2.xml.plist",
      mutate: Mutation.replacing("<dict>", with: "<dixt>"), code: .propertyList,
      description: "4: unknown element <dixt>"),
    Mutation(
      name: "an unclosed tag", fixture: "v2.xml.plist",
      mutate: Mutation.replacing("</dict>", with: "</plist>"), code: .propertyList,
      description: "83: not well-formed XML: Opening and ending tag mismatch: dict line 4 and plist"
    ),
    Mutation(
      name: "an integer that is not a number", fixture: "v2.xml.plist",
      mutate: Mutation.replacing("<integer>", with: "<integer>x"), code: .propertyList,
      description: "8: invalid <integer> \"x1048576\""),
    Mutation(
      name: "a request archive that is not base64", fixture: "v2.xml.plist",
      mutate: Mutation.replacing("<data>", with: "<data>*"), code: .propertyList,
      description: "10: invalid base64 in <data> (invalid character '*')"),
    Mutation(
      name: "a DOCTYPE internal subset", fixture: "v2.xml.plist",
      mutate: Mutation.replacing(
        "<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">",
        with: "<!DOCTYPE plist [<!ENTITY a \"b\">]>"), code: .propertyList,
      description: "2: a DOCTYPE internal subset is not allowed (it could declare entities)"),
    Mutation(
      name: "an array at the top", fixture: "v2.xml.plist",
      mutate: { data in
        let text = String(decoding: data, as: UTF8.self)
        return Data(
          text.replacingOccurrences(
            of: "<plist version=\"1.0\">\n<dict>", with: "<plist version=\"1.0\">\n<array>"
          )
          .replacingOccurrences(of: "</dict>\n</plist>", with: "</array>\n</plist>").utf8)
      }, code: .propertyList, description: "5: <key> outside a <dict>"),
    // Binary property list (v2).
    Mutation(
      name: "offset size 0 in the trailer", fixture: "v2.binary.plist",
      mutate: Mutation.settingFromEnd(26, to: 0), code: .propertyList,
      description: "@1965: trailer offset size 0 is not 1 to 8 bytes"),
    Mutation(
      name: "reference size 9 in the trailer", fixture: "v2.binary.plist",
      mutate: Mutation.settingFromEnd(25, to: 9), code: .propertyList,
      description: "@1966: trailer reference size 9 is not 1 to 8 bytes"),
    Mutation(
      name: "top object past the object count", fixture: "v2.binary.plist",
      mutate: Mutation.settingFromEnd(9, to: 0xFF), code: .propertyList,
      description: "@1975: top object 255 is not below the object count 14"),
    Mutation(
      name: "offset table past the end", fixture: "v2.binary.plist",
      mutate: Mutation.settingFromEnd(2, to: 0xFF), code: .propertyList,
      description: "@1983: offset table position 65419 is outside the object area 9..<1959"),
    Mutation(
      name: "a bad magic", fixture: "v2.binary.plist",
      mutate: Mutation.patching("bplist00", with: "bplist10"), code: .propertyList,
      description: "@6: binary property list of an unsupported version (only bplist0x is read)"),
    // Keyed archive (binary).
    Mutation(
      name: "the objects key renamed", fixture: "keyed-v4.archive",
      mutate: Mutation.patching("$objects", with: "$objectz"), code: .keyedArchive,
      description: "$objects: missing"),
    Mutation(
      name: "the top key renamed", fixture: "keyed-v4.archive",
      mutate: Mutation.patching("$top", with: "$tox"), code: .keyedArchive,
      description: "$top: missing"),
    Mutation(
      name: "a dictionary's keys renamed", fixture: "keyed-v4.archive",
      mutate: Mutation.patching("NS.keys", with: "NS.keyz"), code: .keyedArchive,
      description: "$top.NSKeyedArchiveRootObjectKey.NS.keys: is missing or not an array"),
    // Keyed archive (XML, WebKit's form).
    Mutation(
      name: "a UID that is not a number", fixture: "keyed-v5-webkit-xml.archive.plist",
      mutate: Mutation.replacing(
        "<key>CF$UID</key>\n\t\t\t\t<integer>", with: "<key>CF$UID</key>\n\t\t\t\t<integer>x"),
      code: .propertyList, description: "14: invalid <integer> \"x16\""),
    // Network.framework archive (XOR-masked).
    Mutation(
      name: "the masked magic changed", fixture: "network-framework.blob",
      mutate: { data in
        var data = data
        data[data.startIndex + 3] ^= 0x01
        return data
      }, code: .propertyList, description: "@0: input is neither an XML nor a binary property list"),
    Mutation(
      name: "a byte of the masked trailer changed", fixture: "network-framework.blob",
      mutate: Mutation.settingFromEnd(26, to: 0x55), code: .propertyList,
      description: "@2435: trailer offset size 85 is not 1 to 8 bytes"),
  ]

  @Test("Each mutation fails with its code and location", arguments: mutations)
  func mutation(_ mutation: Mutation) throws {
    let bytes = mutation.mutate(try fixture("resume/\(mutation.fixture)"))
    do {
      _ = try ResumeData(decoding: bytes)
      Issue.record("decoded")
    } catch let error as ResumeDataError {
      #expect(error.code == mutation.code)
      #expect(error.description == mutation.description)
    }
  }
}

import Foundation
import PropertyList
import TestSupport
import Testing

/// What a peer implementation's test suite expects of one of its files.
enum PeerExpectation: Sendable, CustomStringConvertible {
  /// Reads successfully.
  case accept
  /// Reads successfully as OpenStep text, and the OpenStep writer's text of it reads back equal.
  case acceptOpenStep
  /// Reads successfully and writing it again in its own format reproduces its bytes (Apple-made files;
  /// binary ones through the object table, since NSKeyedArchiver's sharing is not CoreFoundation's).
  case acceptByteExact
  /// Reads to the same value as another file of the suite.
  case equals(String)
  /// Is refused with this error code.
  case reject(PropertyListError.Code)
  /// Must not crash or hang; accepting and refusing are both fine.
  case survive

  var description: String {
    switch self {
    case .accept: return "accept"
    case .acceptOpenStep: return "accept as OpenStep"
    case .acceptByteExact: return "accept, byte-exact"
    case .equals(let other): return "equals \(other)"
    case .reject(let code): return "reject \(code)"
    case .survive: return "survive"
    }
  }
}

/// One file of the peer suites and what is expected of it.
struct PeerCase: Sendable, CustomTestStringConvertible {
  let path: String
  let expectation: PeerExpectation
  var testDescription: String { "\(path): \(expectation)" }
}

private let libplist = "libplist/test/data/"
private let rust = "rust-plist/tests/data/"
private let corelibs = "swift-corelibs-foundation/Tests/Foundation/Resources/"
private let essentials = "swift-foundation/Tests/FoundationEssentialsTests/Resources/"

/// Per-file expectations, from each folder's SOURCES.md.
let peerCases: [PeerCase] =
  [
    PeerCase(path: libplist + "1.plist", expectation: .accept),
    PeerCase(path: libplist + "2.plist", expectation: .accept),
    PeerCase(path: libplist + "3.plist", expectation: .accept),
    PeerCase(path: libplist + "4.plist", expectation: .accept),
    PeerCase(path: libplist + "6.plist", expectation: .accept),
    PeerCase(path: libplist + "7.plist", expectation: .accept),
    PeerCase(path: libplist + "amp.plist", expectation: .reject(.malformed)),
    PeerCase(path: libplist + "invalid_tag.plist", expectation: .reject(.malformed)),
    PeerCase(path: libplist + "cdata.plist", expectation: .accept),
    PeerCase(path: libplist + "empty_keys.plist", expectation: .accept),
    PeerCase(path: libplist + "entities.plist", expectation: .accept),
    PeerCase(path: libplist + "hex.plist", expectation: .accept),
    PeerCase(path: libplist + "malformed_dict.bplist", expectation: .reject(.malformed)),
    // Upstream made these to test cycle detection, but their trailers also declare more offset-table
    // bytes than the file holds, which CoreFoundation (and we) refuse before reading any object.
    PeerCase(path: libplist + "recursion.bplist", expectation: .reject(.malformed)),
    PeerCase(path: libplist + "order.bplist", expectation: .equals(libplist + "order.plist")),
    PeerCase(path: libplist + "signed.bplist", expectation: .equals(libplist + "signed.plist")),
    PeerCase(path: libplist + "unsigned.bplist", expectation: .equals(libplist + "unsigned.plist")),
    PeerCase(
      path: libplist + "signedunsigned.bplist",
      expectation: .equals(libplist + "signedunsigned.plist")),
    PeerCase(path: libplist + "uid.bplist", expectation: .acceptByteExact),
    PeerCase(path: libplist + "data.bplist", expectation: .accept),
    PeerCase(path: libplist + "j1.json", expectation: .reject(.unsupportedFormat)),
    PeerCase(path: libplist + "j2.json", expectation: .reject(.unsupportedFormat)),
    PeerCase(path: libplist + "int64_min_max.json", expectation: .reject(.unsupportedFormat)),
    PeerCase(path: libplist + "o1.ostep", expectation: .acceptOpenStep),
    PeerCase(path: libplist + "o2.ostep", expectation: .acceptOpenStep),
    PeerCase(path: libplist + "o3.ostep", expectation: .acceptOpenStep),
    PeerCase(path: libplist + "test.strings", expectation: .acceptOpenStep),
    PeerCase(path: rust + "binary.plist", expectation: .accept),
    PeerCase(path: rust + "xml.plist", expectation: .accept),
    PeerCase(path: rust + "book.plist", expectation: .accept),
    PeerCase(path: rust + "xml-animals.plist", expectation: .accept),
    PeerCase(path: rust + "binary_NSKeyedArchiver.plist", expectation: .acceptByteExact),
    PeerCase(path: rust + "binary_circular_array.plist", expectation: .reject(.malformed)),
    PeerCase(path: rust + "binary_zero_offset_size.plist", expectation: .reject(.malformed)),
    PeerCase(path: rust + "binary_three_byte_integer_offset_table.plist", expectation: .accept),
    PeerCase(path: rust + "utf16_bplist.plist", expectation: .accept),
    PeerCase(path: rust + "xml_error.plist", expectation: .reject(.malformed)),
    PeerCase(path: rust + "xml_entity_error.plist", expectation: .reject(.malformed)),
    PeerCase(path: rust + "ascii-animals.plist", expectation: .acceptOpenStep),
    PeerCase(path: rust + "ascii-sample.plist", expectation: .acceptOpenStep),
    PeerCase(path: rust + "netnewswire.pbxproj", expectation: .acceptOpenStep),
    PeerCase(path: corelibs + "NSKeyedUnarchiver-ComplexTest.plist", expectation: .acceptByteExact),
    PeerCase(path: corelibs + "Info.plist", expectation: .accept),
    PeerCase(path: corelibs + "Test.plist", expectation: .accept),
    PeerCase(path: corelibs + "NSURLTestData.plist", expectation: .accept),
    PeerCase(
      path: essentials + "Generic_XML_Properties_Binary.plist",
      expectation: .equals(essentials + "Generic_XML_Properties.plist")),
    PeerCase(path: essentials + "bad_plist.bad", expectation: .reject(.malformed)),
    PeerCase(path: essentials + "Test_5616259.bad", expectation: .reject(.malformed)),
    PeerCase(path: essentials + "Test_82142612.bad", expectation: .reject(.malformed)),
    PeerCase(
      path: essentials + "test_oldStylePlist_getSlashedChars_octal.plist",
      expectation: .equals(essentials + "test_oldStylePlist_getSlashedChars_octal_expected.plist")),
    PeerCase(
      path: essentials + "test_oldStylePlist_getSlashedChars_octal_expected.plist",
      expectation: .accept),
  ]
  + (1...8).flatMap { size in
    [
      PeerCase(
        path: libplist + "off\(size)byte\(size == 1 ? "" : "s").bplist",
        expectation: .equals(libplist + "offxml.plist")),
      PeerCase(
        path: libplist + "dictref\(size)byte\(size == 1 ? "" : "s").bplist",
        expectation: .equals(libplist + "offxml.plist")),
    ]
  }
  + [
    "ArrayTest", "ConcreteValueTest", "EdgeInsetsTest", "NotificationTest", "OrderedSetTest",
    "RangeTest",
    "RectTest", "URLTest", "UUIDTest",
  ].map { PeerCase(path: corelibs + "NSKeyedUnarchiver-\($0).plist", expectation: .accept) }
  + listPeerFiles(under: corelibs + "Fixtures/macOS-10.14").map {
    PeerCase(path: $0, expectation: .acceptByteExact)
  }
  + listPeerFiles(under: "go-plist/testdata/xml_unusual_cases").map {
    PeerCase(path: $0, expectation: .survive)
  }
  + listPeerFiles(under: "libplist/fuzz").filter { !$0.hasSuffix(".dict") }.map {
    PeerCase(path: $0, expectation: .survive)
  }

/// Files under a folder of the peer suites, relative to the suites' root, sorted; empty when absent.
func listPeerFiles(under folder: String) -> [String] {
  let root = peerSuites.appendingPathComponent(folder)
  guard let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
  else { return [] }
  var paths = [String]()
  for case let url as URL in enumerator where !url.hasDirectoryPath {
    paths.append(folder + "/" + url.path.dropFirst(root.path.count + 1))
  }
  return paths.sorted()
}

/// Runs our readers over every file of ../shared/peer-suites and checks each upstream expectation.
@Suite(
  "Peer suites",
  .enabled(if: peerSuitesPresent, "../shared/peer-suites is absent: peer conformance tests skipped")
)
struct PeerSuiteTests {
  @Test("Each peer file meets its upstream expectation", arguments: peerCases)
  func peerFile(_ peer: PeerCase) throws {
    let bytes = try Data(contentsOf: peerSuites.appendingPathComponent(peer.path))
    switch peer.expectation {
    case .accept:
      _ = try PropertyListValue.decode(bytes)
    case .acceptOpenStep:
      let (value, format) = try PropertyListValue.decodeAnyFormat(bytes)
      #expect(format == .openStep)
      let written = OpenStepPropertyListWriter().write(value)
      #expect(try PropertyListValue.decodeAnyFormat(written).value == value)
      #expect(try OpenStepPropertyListReader().read(written) == value)
    case .acceptByteExact:
      let (value, format) = try PropertyListValue.decode(bytes)
      if format == .binary {
        let table = try BinaryPropertyListObjectTable(reading: bytes)
        #expect(table.encoded() == bytes)
        #expect(try table.value() == value)
      } else {
        #expect(try value.encoded(as: format) == bytes)
      }
    case .equals(let other):
      let otherBytes = try Data(contentsOf: peerSuites.appendingPathComponent(other))
      let value = try PropertyListValue.decodeAnyFormat(bytes).value
      #expect(value == (try PropertyListValue.decode(otherBytes).value))
    case .reject(let code):
      #expect {
        _ = try PropertyListValue.decodeAnyFormat(bytes)
      } throws: { error in
        (error as? PropertyListError)?.code == code
      }
    case .survive:
      do {
        let (value, format) = try PropertyListValue.decodeAnyFormat(bytes)
        // Whatever is accepted must survive a round trip through its own format.
        let written =
          switch format {
          case .xml: try value.encoded(as: .xml)
          case .binary: try value.encoded(as: .binary)
          case .openStep: OpenStepPropertyListWriter().write(value)
          }
        #expect(try PropertyListValue.decodeAnyFormat(written).value == value)
      } catch is PropertyListError {
        // Refusing is fine; crashing or throwing anything else is not.
      }
    }
  }

  @Test("Every accepted peer file converts to the other format and back to an equal value")
  func crossFormat() throws {
    for peer in peerCases {
      switch peer.expectation {
      case .accept, .acceptOpenStep: break
      default: continue
      }
      let bytes = try Data(contentsOf: peerSuites.appendingPathComponent(peer.path))
      let (value, format) = try PropertyListValue.decodeAnyFormat(bytes)
      let other: PropertyListFormat = format == .xml ? .binary : .xml
      guard let converted = try? value.encoded(as: other) else { continue }
      do {
        #expect(try PropertyListValue.decode(converted).value == value, "\(peer.path)")
      } catch {
        Issue.record("\(peer.path): \(error)")
      }
    }
  }
}

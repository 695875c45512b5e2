import Foundation
import KeyedArchive
import PropertyList
@_spi(Differential) import ResumeData
import TestSupport
import Testing

/// A repair makes its blob without reading it back: the XML of a conversion to a plain form is
/// written only when asked for, and a request archive whose keys are renamed in its bytes keeps
/// the source's request, read from the source's bytes. What the blob says must be what its bytes
/// say.
@Suite("Repaired blobs made without reading them back")
struct RepairedWithoutReadingTests {
  @Test(
    "Every resume fixture repaired for every target: the blob is its bytes read back",
    arguments: fixturesRecursively("resume"))
  func everyFixture(_ name: String) throws {
    guard let blob = try? ResumeData(decoding: try fixture(name)) else { return }
    for target in RepairTarget.allCases {
      #expect(ResumeDifferential.repairDifference(blob, for: target) == nil, "\(name)")
    }
  }

  @Test(
    "Every resume-data fuzz find repaired for every target: the blob is its bytes read back",
    arguments: resumeFuzzRegressions)
  func everyFuzzFind(_ name: String) throws {
    guard let blob = try resumeFuzzFind(name) else { return }
    for target in RepairTarget.allCases {
      #expect(ResumeDifferential.repairDifference(blob, for: target) == nil, "\(name)")
    }
  }

  @Test("Converted to v2 for iOS 10.0, the keyed fixture's request archives are renamed in place")
  func keyedForIOS10() throws {
    let blob = try ResumeData(decoding: try fixture("resume/keyed-v5-response.archive"))
    let repaired = try #require(try blob.repaired(for: .ios10Early).blob)
    #expect(repaired.generation == .v2)
    let request = try #require(repaired.currentRequest)
    #expect(request.layout == .dollarNumbered)
    #expect(request.rootKey == "root")
    let bytes = try #require(repaired.entries[ResumeDataKey.currentRequest]?.dataValue)
    #expect(request == (try URLRequestArchive(decoding: bytes)))
    // What a diagnosis of the repaired blob says is what it says of the bytes read back.
    let read = try ResumeData(decoding: try repaired.encoded(keepingUntouchedBytes: true))
    #expect(repaired.findings(for: .ios10Early) == read.findings(for: .ios10Early))
  }

  @Test(
    "Text XML carries as it is, and text it does not, each converted to v2 and read back",
    arguments: [
      "plain text of some length, well past a word", "tab\there", "line\nbreak", "cr\rhere",
      "del\u{7F}at 3", "0123456\u{7F}", "01234567\u{1F}89", "\u{01}", "é accent",
      "0123456789abcde\u{7F}",
    ])
  func textCarried(_ text: String) throws {
    var entries = PropertyListDictionary()
    entries[ResumeDataKey.downloadURL] = .string("https://example.com/file")
    entries[ResumeDataKey.bytesReceived] = .integer(PropertyListInteger(1000))
    entries[ResumeDataKey.entityTag] = .string(text)
    entries[ResumeDataKey.tempFileName] = .string("CFNetworkDownload_1.tmp")
    guard let blob = try? ResumeData(building: entries, as: .keyed),
      let conversion = try? blob.converted(to: .v2)
    else {
      // Text XML cannot carry at all: the conversion refuses it, as writing it would.
      #expect(
        text.unicodeScalars.contains {
          $0.value < 0x20 && $0.value != 0x09 && $0.value != 0x0A && $0.value != 0x0D
        })
      return
    }
    let read = try ResumeData(
      decoding: try conversion.blob.encoded(keepingUntouchedBytes: true))
    #expect(read.entityTag == conversion.blob.entityTag)
    #expect(ResumeDifferential.typedDifference(conversion.blob, read) == nil)
  }
}

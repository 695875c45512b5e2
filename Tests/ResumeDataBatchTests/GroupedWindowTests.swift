import Foundation
import ResumeData
import TestSupport
import Testing

@testable import ResumeDataBatch

@Suite("Batch windows processed grouped by the form of their blobs")
struct GroupedWindowTests {
  static func form(_ line: String) -> BlobForm? {
    Array(line.utf8).withUnsafeBufferPointer { BlobForm(line: $0) }
  }

  static func window(_ lines: [String], limit: Int = 1 << 20) -> LineWindow {
    var window = LineWindow()
    for line in lines { window.append(record: Data(line.utf8), limit: limit) }
    return window
  }

  @Test(
    "A line has no form without a \"blob\" string among its first 1,024 bytes",
    arguments: [
      "{\"path\":\"a.plist\"}", "{\"id\":1}", "{\"blob\":1}", "{\"blob\"}", "{\"blob\":", "",
      "not JSON", "{\"id\":\"" + String(repeating: "x", count: 1_010) + "\",\"blob\":\"AAAA\"}",
    ])
  func noForm(_ line: String) {
    #expect(Self.form(line) == nil)
  }

  @Test(
    "Blobs are of one form when their first 16 characters are the same",
    arguments: [
      (
        "{\"id\":1,\"blob\":\"YnBsaXN0MDDUAQIDBAUGxyz\"}", "{\"blob\" : \"YnBsaXN0MDDUAQIDabc\"}",
        true
      ),
      ("{\"blob\":\"YnBsaXN0MDDUAQID\"}", "{\"blob\":\"YnBsaXN0MDDUAQIE\"}", false),
      ("{\"blob\":\"PD94\"}", "{\"id\":\"x\",\"blob\":\"PD94\"}", true),
      ("{\"blob\":\"PD94\"}", "{\"blob\":\"PD94bW\"}", false),
      ("{\"blob\":\"\"}", "{\"blob\":\"\"}", true),
      ("{\"blob\":\"\"}", "{\"blob\":\"A\"}", false),
    ])
  func sameForm(_ first: String, _ second: String, same: Bool) throws {
    let firstForm = try #require(Self.form(first))
    let secondForm = try #require(Self.form(second))
    #expect((firstForm == secondForm) == same)
  }

  @Test("A blob's form is the same read in words (16 bytes or more left) or a byte at a time")
  func wordsAndBytes() throws {
    let alphabet = Array("YnBsaXN0MDDUAQIDBAUGxyz+/=".utf8)
    var forms: [[UInt8]: BlobForm] = [:]
    for length in 0...20 {
      let text = Array(alphabet.prefix(length))
      // The string's end near the line's end (read a byte at a time), and far from it.
      let near = try #require(
        Self.form("{\"blob\":\"" + String(decoding: text, as: UTF8.self) + "\"}"))
      let far = try #require(
        Self.form(
          "{\"blob\":\"" + String(decoding: text, as: UTF8.self) + "\",\"id\":\"0123456789abcdef\"}"
        ))
      #expect(near == far, "\(length) characters")
      forms[Array(text.prefix(16))] = far
    }
    // Different first sixteen characters, different forms.
    #expect(Set(forms.keys).count == 17)
    let distinct = forms.values.enumerated().allSatisfy { index, form in
      forms.values.enumerated().allSatisfy { $0.offset == index || $0.element != form }
    }
    #expect(distinct)
  }

  @Test("The order groups lines by form, first seen first, each form's lines in line order")
  func order() {
    let keyed = "{\"blob\":\"YnBsaXN0MDDUAQIDBAUG\"}"
    let xml = "{\"blob\":\"PD94bWwgdmVyc2lv\"}"
    let network = "{\"blob\":\"NhUIJRIHQ1/UAQID\"}"
    let path = "{\"path\":\"a.plist\"}"
    let bad = "{\"id\":0}"
    #expect(
      Self.window([keyed, xml, network, keyed, path, xml, bad, keyed, path]).groupedOrder()
        == [0, 3, 7, 1, 5, 2, 4, 6, 8])
    // One form, or none: line order.
    #expect(Self.window([keyed, keyed, keyed]).groupedOrder() == nil)
    #expect(Self.window([path, bad, path]).groupedOrder() == nil)
    #expect(Self.window([keyed]).groupedOrder() == nil)
    // A line too long to be held has no form.
    #expect(Self.window([keyed, xml, keyed], limit: 30).groupedOrder() == [0, 2, 1])
    // Forms beyond the eighth go last, together, in line order.
    let forms = (0..<10).map { "{\"blob\":\"F\($0)\"}" }
    #expect(
      Self.window(forms + forms).groupedOrder()
        == (0..<8).flatMap { [$0, $0 + 10] } + [8, 9, 18, 19])
  }

  /// A keyed archive, an XML plist and a Network.framework blob: three forms.
  static func blobs() throws -> [Data] {
    try ["keyed-v5-response.archive", "v2.xml.plist", "network-framework.blob"].map {
      try fixture("resume/" + $0)
    }
  }

  /// 700 records, more than two windows of one job (256 lines each): the forms of `blobs` in
  /// turn, with a bad line (every eleventh, from the sixth) now and then.
  static func formsInTurn(_ blobs: [Data]) -> [Data] {
    (0..<700).map { index in
      index % 11 == 5 ? Data("{\"id\":\(index)}".utf8) : record(index, blobs[index % 3])
    }
  }

  @Test(
    "Records of several forms across windows: results in line order, each as the record alone",
    arguments: [1, 2, 3])
  func manyForms(jobs: Int) throws {
    let records = Self.formsInTurn(try Self.blobs())
    let pipeline = BatchPipeline(
      options: BatchOptions(operation: .repair(.ios13Later)), inputName: "records", jobs: jobs)
    let results = pipeline.results(of: records)
    #expect(results.map(\.line) == Array(1...700))
    #expect(results.map(\.ok) == (0..<700).map { $0 % 11 != 5 })
    #expect(
      results.map(\.json)
        == records.indices.map { pipeline.process(records[$0], line: $0 + 1).json })
  }

  @Test(
    "Result lines in pieces: whole lines in line order, as written in one; a piece a line when grouped",
    arguments: [1, 2, 3])
  func pieces(jobs: Int) throws {
    let blobs = try Self.blobs()
    // Forms in turn: no two lines in a row of one form, so each is a piece of its own. The first
    // form alone: a piece a run of 16 lines (44 runs). Forms in blocks of 250 lines, none seen
    // again after the next: a window of two forms is grouped, yet in line order, so a piece a run
    // again.
    let mixed = Self.formsInTurn(blobs)
    let alike = (0..<700).map { record($0, blobs[0]) }
    let blocks = (0..<700).map { record($0, blobs[$0 / 250]) }
    for (records, count) in [(mixed, 700), (alike, 44), (blocks, 44)] {
      let file = FileManager.default.temporaryDirectory.appendingPathComponent(
        "pieces-\(UUID().uuidString).ndjson")
      try records.map { $0 + Data("\n".utf8) }.reduce(Data(), +).write(to: file)
      defer { try? FileManager.default.removeItem(at: file) }
      let pipeline = BatchPipeline(
        options: BatchOptions(operation: .repair(.ios13Later)), inputName: "records", jobs: jobs)
      var pieces: [Data] = []
      let allOk = try pipeline.run(
        contentsOf: file.path, writePieces: { pieces += $0.map { Data($0) } })
      var written = Data()
      _ = try pipeline.run(contentsOf: file.path, write: { written += $0 })
      #expect(allOk == (records != mixed))
      #expect(pieces.count == count)
      #expect(pieces.allSatisfy { $0.last == UInt8(ascii: "\n") })
      #expect(pieces.reduce(Data(), +) == written)
      #expect(
        written
          == pipeline.results(of: records).reduce(Data()) { $0 + $1.json + Data("\n".utf8) })
    }
  }

  @Test("\"path\" records keep their order among themselves: the same file twice, in place")
  func pathsInOrder() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "grouped-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("a.plist")
    try fixture("resume/v4-byte-range.xml.plist").write(to: file)
    let path = "{\"path\":\"\(file.path)\"}"
    // Blob records of two forms around them, so that the window is grouped.
    let records = [
      record(1, try fixture("resume/v2.xml.plist")), Data(path.utf8),
      record(3, try fixture("resume/keyed-v5-response.archive")), Data(path.utf8),
    ]
    let options = BatchOptions(operation: .repair(.ios11Early), inPlace: true)
    let results = BatchPipeline(options: options, jobs: 1).results(of: records)
    #expect(results.map(\.ok) == [true, true, true, true])
    // The first names the file rewritten; the second finds it repaired already.
    #expect(text(results[1]).contains("\"written\":\"\(file.path)\""))
    #expect(text(results[3]).contains("\"written\":null"))
  }
}

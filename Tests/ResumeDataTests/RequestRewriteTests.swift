import Foundation
import KeyedArchive
import PropertyList
import ResumeData
import Testing

/// Rewrites of the two request archives: an original request that is the current one's bytes
/// again is rewritten once, so one that differs must still get its own rewrite.
@Suite("Request rewrites")
struct RequestRewriteTests {
  static let originals = [
    "get-22-slots.archive", "post-body-headers.archive", "no-http-message-16-slots.archive",
  ]

  /// A keyed v4 blob whose current request is get-22-slots and whose original is `original`.
  static func blob(original: String) throws -> ResumeData {
    var entries = try plainEntries(
      version: 4, extra: [(ResumeDataKey.tempFileName, .string("CFNetworkDownload_r1.tmp"))])
    entries[ResumeDataKey.originalRequest] = .data(try requestArchive(original))
    return try ResumeData(decoding: keyedBlob(entries))
  }

  @Test(
    "Repair for iOS 10.0 rewrites each request archive from its own bytes",
    arguments: originals)
  func ios10Layout(original: String) throws {
    let result = try Self.blob(original: original).repaired(for: .ios10Early)
    let repaired = try #require(result.blob)
    for (key, name) in [
      (ResumeDataKey.currentRequest, "get-22-slots.archive"),
      (ResumeDataKey.originalRequest, original),
    ] {
      let expected = try URLRequestArchive(decoding: requestArchive(name))
        .converted(to: .dollarNumbered).encoded()
      #expect(repaired.entries[key]?.dataValue == expected, "\(key)")
    }
    #expect(
      result.findings.filter { $0.code == "rewrite-requests-for-ios10" }.map(\.path)
        == ResumeData.requestKeys)
    // The decoded requests are the rewritten ones.
    #expect(repaired.originalRequest?.layout == .dollarNumbered)
    #expect(
      repaired.originalRequest?.httpMethod
        == (try URLRequestArchive(decoding: requestArchive(original)).httpMethod))
  }

  @Test("A header set on both requests keeps each request's own fields", arguments: originals)
  func header(original: String) throws {
    var blob = try Self.blob(original: original)
    let before = blob
    let changes = try blob.setHeader("X-Mirror", "2")
    #expect(blob != before)
    for (key, name) in [
      (ResumeDataKey.currentRequest, "get-22-slots.archive"),
      (ResumeDataKey.originalRequest, original),
    ] {
      let expected = try URLRequestArchive(decoding: requestArchive(name))
        .settingHeader("X-Mirror", to: "2").encoded()
      #expect(blob.entries[key]?.dataValue == expected, "\(key)")
    }
    #expect(changes.map(\.path) == ResumeData.requestKeys)
  }

  @Test(
    "Converting a Network.framework blob archives each request from its own object",
    arguments: originals)
  func networkFramework(original: String) throws {
    let source = try ResumeData(decoding: networkFrameworkBlob(original: original))
    let converted = try source.converted(to: .keyed).blob
    for (key, request) in [
      (ResumeDataKey.currentRequest, source.currentRequest),
      (ResumeDataKey.originalRequest, source.originalRequest),
    ] {
      let root = try #require(request).archive.decodeRoot()
      let expected = try KeyedArchive(root: root).encoded()
      #expect(converted.entries[key]?.dataValue == expected, "\(key)")
    }
    #expect(converted.originalRequest?.url == source.originalRequest?.url)
    #expect(converted.originalRequest?.httpMethod == source.originalRequest?.httpMethod)
  }
}

import Foundation
import KeyedArchive
import PropertyList
import ResumeData
import TestSupport
import Testing

/// What this toolkit writes, read as Apple's decoders read it: the `$top` key of every archive,
/// the validators a Network.framework blob keeps in its response, the request layout, WebKit's
/// bookmark data. Each test reads the written bytes themselves (with the property-list reader
/// alone, not the lenient resume-data reader), so that a wrong key cannot hide behind a reader that
/// accepts either.
@Suite("Written as Apple's decoders read")
struct AppleDecoderFormTests {
  let directory = URL(fileURLWithPath: "/tmp/partials", isDirectory: true)

  func blob(_ name: String) throws -> ResumeData {
    try ResumeData(decoding: try fixture(name))
  }

  /// The `$top` keys of an archive's bytes, and its envelope.
  func envelope(_ bytes: Data) throws -> (top: [String], envelope: PropertyListDictionary) {
    let plist = try PropertyListValue.decode(bytes).value
    guard case .dictionary(let envelope) = plist,
      case .dictionary(let top)? = envelope["$top"]
    else {
      Issue.record("not a keyed archive")
      return ([], [:])
    }
    return (top.keys, envelope)
  }

  /// The keys of a Network.framework blob's archive, unmasked.
  func networkFrameworkTop(_ blob: ResumeData) throws -> [String] {
    try envelope(NetworkFrameworkMask.toggled(try blob.encoded())).top
  }

  /// The objects of an archive's bytes.
  func objects(_ bytes: Data) throws -> [PropertyListValue] {
    guard case .array(let objects)? = try envelope(bytes).envelope["$objects"] else { return [] }
    return objects
  }

  @Test(
    "Network.framework blobs are archived under root, the key its secure decoder reads",
    arguments: ["resume/v2.xml.plist", "resume/keyed-v5-response.archive", "resume/safari.archive"])
  func networkFrameworkRootKey(_ name: String) throws {
    let (converted, _) = try blob(name).converted(
      to: .networkFramework, temporaryDirectory: directory)
    #expect(try networkFrameworkTop(converted) == ["root"])
    let repaired = try #require(try blob(name).repaired(for: .networkFramework).blob)
    #expect(try networkFrameworkTop(repaired) == ["root"])
    // In WebKit's wrapper: the wrapper under the literal, the blob it holds under root.
    let (wrapped, _) = try blob(name).converted(
      to: .networkFrameworkWebKit, temporaryDirectory: directory)
    let wrapper = try envelope(try wrapped.encoded())
    #expect(wrapper.top == ["NSKeyedArchiveRootObjectKey"])
    let inner = try #require(
      try objects(try wrapped.encoded()).compactMap(\.dataValue).first {
        NetworkFrameworkMask.isMasked($0)
      })
    #expect(try envelope(NetworkFrameworkMask.toggled(inner)).top == ["root"])
  }

  @Test("A response archive rebuilt from a Network.framework blob is under root")
  func responseRootKey() throws {
    for target in [ResumeDataGeneration.keyed, .v2, .v4, .safari] {
      let (converted, _) = try blob("resume/network-framework.blob").converted(
        to: target, temporaryDirectory: directory)
      let response = try #require(converted.entries[ResumeDataKey.response]?.dataValue)
      #expect(try envelope(response).top == ["root"], "\(target)")
    }
    let repaired = try #require(
      try blob("resume/network-framework.blob").repaired(for: .ios13Later).blob)
    let response = try #require(repaired.entries[ResumeDataKey.response]?.dataValue)
    #expect(try envelope(response).top == ["root"])
  }

  /// The header fields of the response a Network.framework blob holds, read from its objects.
  func responseHeaders(_ blob: ResumeData) throws -> [String: String] {
    let info = try #require(blob.networkFrameworkInfo)
    guard case .reference(.object(let response))? = info["response"] else { return [:] }
    #expect(response.classChain == ["NSHTTPURLResponse", "NSURLResponse", "NSObject"])
    guard case .reference(.dictionary(let entries, _))? = response["allHeaderFields"] else {
      return [:]
    }
    var headers: [String: String] = [:]
    for entry in entries {
      if case .string(let name, _) = entry.key, case .string(let value, _) = entry.value {
        headers[name] = value
      }
    }
    return headers
  }

  @Test("A Network.framework blob made from a dictionary keeps its validators in a response")
  func validatorsInResponse() throws {
    let source = try blob("resume/keyed-v4.archive")
    let (converted, findings) = try source.converted(
      to: .networkFramework, temporaryDirectory: directory)
    #expect(
      try responseHeaders(converted) == [
        "ETag": "\"5534b35d-7c7be1\"", "Last-Modified": "Mon, 20 Apr 2015 08:05:49 GMT",
      ])
    #expect(converted.entityTag == source.entityTag)
    #expect(converted.serverDownloadDate == source.serverDownloadDate)
    #expect(findings.map(\.code).contains("conversion-derived"))
    #expect(!findings.map(\.path).contains(ResumeDataKey.entityTag))
    // Repair and diagnosis agree: the repaired blob resumes on the target it was repaired for.
    let repaired = try #require(try source.repaired(for: .networkFramework).blob)
    #expect(ResumeData.outcome(of: repaired.judgements(for: .networkFramework)) == .resume)
  }

  @Test("No validator, no Network.framework blob: conversion and repair refuse")
  func noValidatorRefused() throws {
    var source = try blob("resume/v2.xml.plist")
    try source.setEntry(ResumeDataKey.entityTag, nil)
    #expect {
      _ = try source.converted(to: .networkFramework, temporaryDirectory: directory)
    } throws: { error in
      (error as? ResumeDataError)?.code == .unsupported
        && (error as? ResumeDataError)?.keyPath == ResumeDataKey.entityTag
    }
    #expect(throws: ResumeDataError.self) { _ = try source.repaired(for: .networkFramework) }
  }

  @Test("WebKit's wrapper asked for as XML is written as XML")
  func webKitWrapperXML() throws {
    let (converted, _) = try blob("resume/v2.xml.plist").converted(
      to: .networkFrameworkWebKit, format: .xml, temporaryDirectory: directory)
    #expect(converted.container == .keyedArchiveXML)
    #expect(try converted.encoded().starts(with: Data("<?xml".utf8)))
    #expect(try envelope(try converted.encoded()).top == ["NSKeyedArchiveRootObjectKey"])
  }

  /// Whether a request archive's bytes are in the standard layout under the literal key.
  func isStandard(_ bytes: Data?) throws -> Bool {
    let bytes = try #require(bytes)
    let (top, _) = try envelope(bytes)
    let objects = try objects(bytes)
    guard top == ["NSKeyedArchiveRootObjectKey"], case .dictionary(let request) = objects[1] else {
      return false
    }
    return request["__nsurlrequest_proto_prop_obj_1"] != nil && request["$4"] == nil
  }

  @Test(
    "The $N layout goes back to the standard one for every form iOS 10.0–10.1 does not read",
    arguments: [ResumeDataGeneration.v4, .keyed, .safari])
  func dollarLayoutRestored(_ target: ResumeDataGeneration) throws {
    let source = try blob("repair/rewrite-requests-for-ios10.after.xml.plist")
    let (converted, findings) = try source.converted(to: target, temporaryDirectory: directory)
    for key in ResumeData.requestKeys where converted.entries[key] != nil {
      #expect(try isStandard(converted.entries[key]?.dataValue), "\(key)")
    }
    #expect(findings.filter { $0.code == "restore-standard-request-layout" }.count >= 1)
  }

  @Test("Converted to Network.framework, requests in the $N layout become standard objects")
  func dollarLayoutIntoNetworkFramework() throws {
    let source = try blob("repair/rewrite-requests-for-ios10.after.xml.plist")
    let repaired = try #require(try source.repaired(for: .networkFramework).blob)
    let info = try #require(repaired.networkFrameworkInfo)
    for field in ["currentRequest", "originalRequest"] {
      guard case .reference(.object(let request))? = info[field] else {
        Issue.record("no \(field)")
        continue
      }
      #expect(request["__nsurlrequest_proto_prop_obj_1"] != nil, "\(field)")
      #expect(request["$4"] == nil, "\(field)")
    }
  }

  @Test("Kept in v2, which iOS 10.0–10.1 reads, and said so")
  func dollarLayoutKept() throws {
    let source = try blob("repair/rewrite-requests-for-ios10.after.xml.plist")
    let (converted, findings) = try source.converted(
      to: .v2, format: .binary, temporaryDirectory: directory)
    #expect(converted.currentRequest?.layout == .dollarNumbered)
    #expect(
      findings.filter { $0.code == "request-layout-kept" }.map(\.path) == ResumeData.requestKeys)
  }

  @Test("An edit of a keyed blob in the $N layout restores the standard layout, and says so")
  func editRestoresLayout() throws {
    let (keyed, _) = try blob("repair/rewrite-requests-for-ios10.after.xml.plist").converted(
      to: .keyed, temporaryDirectory: directory)
    // Put back in the $N layout, as a copy of the iOS 10 fix would leave it.
    var dollar = keyed
    for key in ResumeData.requestKeys {
      let request = try URLRequestArchive(decoding: try #require(keyed.entries[key]?.dataValue))
      try dollar.setEntry(key, .data(try request.encodedConverted(to: .dollarNumbered)))
    }
    let edited = try ResumeData(decoding: try dollar.encoded())
    var blob = edited
    let changes = try blob.setURL("https://example.org/new")
    #expect(changes.filter { $0.code == "restore-standard-request-layout" }.count == 2)
    let written = try ResumeData(decoding: try blob.encoded())
    for key in ResumeData.requestKeys {
      #expect(try isStandard(written.entries[key]?.dataValue), "\(key)")
    }
  }

  @Test("WebKit's bookmark data goes with a keyed blob, and is reported where it cannot")
  func bookmarkKept() throws {
    let source = try blob("resume/keyed-v5-webkit-xml.archive.plist")
    #expect(source.placeholderBookmarkData == Data("book".utf8))
    for format in [PropertyListFormat.binary, .xml] {
      let (keyed, _) = try source.converted(to: .keyed, format: format, infoVersion: 4)
      let written = try keyed.encoded()
      #expect(
        try envelope(written).envelope["ResumePlaceholderURLBookmarkData"]
          == .data(Data("book".utf8)), "\(format)")
      #expect(try ResumeData(decoding: written).placeholderBookmarkData == Data("book".utf8))
    }
    let (plain, findings) = try source.converted(to: .v4)
    #expect(plain.placeholderBookmarkData == nil)
    #expect(
      findings.filter { $0.code == "conversion-dropped" }.map(\.path) == [
        "ResumePlaceholderURLBookmarkData"
      ])
  }

  @Test("What a conversion makes from another value is reported")
  func derivationsReported() throws {
    // Safari's blob has no original request: Network.framework's object gets the current one.
    let (_, findings) = try blob("resume/safari.archive").converted(to: .networkFramework)
    #expect(findings.contains { $0.code == "conversion-derived" && $0.path == "originalRequest" })
    // The wrapper's inner TempFileName, made from LocalPath, is the inner conversion's to say.
    let (_, wrapped) = try blob("resume/v1.xml.plist").converted(to: .networkFrameworkWebKit)
    #expect(
      wrapped.contains {
        $0.code == "conversion-derived" && $0.path == ResumeDataKey.tempFileName
      })
  }

  @Test("An edit with nothing to change refuses rather than writing the blob as it was")
  func emptyBlobEdit() throws {
    var empty = try blob("resume/ios12-empty.archive")
    #expect {
      try empty.setURL("https://example.org/new")
    } throws: { error in
      (error as? ResumeDataError)?.code == .unsupported
    }
    #expect {
      try empty.setHeader("X-Test", "1")
    } throws: { error in
      (error as? ResumeDataError)?.code == .unsupported
    }
  }

  @Test("A request under root: each kind of session as the evidence says, not known before it")
  func requestRootKeyOutcomes() throws {
    var source = try blob("resume/v2.xml.plist")
    let request = try #require(source.entries[ResumeDataKey.currentRequest]?.dataValue)
    try source.setEntry(ResumeDataKey.currentRequest, .data(try rekeyed(request, to: "root")))
    let blob = try ResumeData(decoding: try source.encoded())
    #expect(blob.findings().map(\.code) == ["request-root-key", "ios10-request-layout"])
    let finding = try #require(blob.findings().first)
    #expect(
      blob.sessionOutcomes(of: finding, on: .ios13Later)
        == SessionOutcomes(foreground: .resume, background: .fail))
    #expect(blob.outcome(of: finding, on: .ios13Later) == .fail)
    #expect(blob.outcome(of: finding, on: .ios12) == .notKnown)
    #expect(blob.outcome(of: finding, on: .ios10Early) == .fail)
    #expect(blob.outcome(of: finding, on: .linux) == .unaffected)
    // Repair moves the root under the literal: the request archive's bytes are the standard ones.
    let repaired = try #require(try blob.repaired(for: .ios13Later).blob)
    #expect(repaired.entries[ResumeDataKey.currentRequest]?.dataValue == request)
  }

  @Test("The root-key peek agrees with decoding on every fixture archive")
  func peekAgrees() throws {
    for name in fixturesRecursively("archive") + fixturesRecursively("resume") {
      let data = try fixture(name)
      let peeked = ArchiveRootKeys(peekingBinaryArchive: data)
      guard let archive = try? KeyedArchive(decoding: data) else { continue }
      if let peeked { #expect(peeked == archive.rootKeys, "\(name)") }
      if archive.format == .binary { #expect(peeked != nil, "\(name)") }
    }
  }
}

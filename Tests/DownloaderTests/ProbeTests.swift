import Downloader
import Foundation
import TestHTTPServer
import Testing

/// The file every probe case serves: 100 KB of the download tests' pattern (small enough that a
/// body the probe stops reading fits in the socket's buffers, so the server never waits on it).
private let probeBody = sourceBytes.prefix(100_000)

/// The instant the cases take for now: half an hour into the signed URL's hour.
private let probeNow = Date(timeIntervalSince1970: 1_796_646_600)  // 2026-12-07T12:30:00Z

/// One server behaviour and what the probe must say about it.
struct ProbeCase: Sendable, CustomStringConvertible {
  let name: String
  /// Publishes the behaviour; returns the path to probe.
  let setUp: @Sendable (TestHTTPServer) -> String
  /// The method the download uses.
  var method = "GET"
  /// The finding codes, in order.
  let findings: [String]
  /// The outcome for apple, network-framework, resumedata, curl, wget.
  let outcomes: [ProbeOutcome]
  /// The reasons of each verdict, in the same order.
  let reasons: [[String]]

  var description: String { name }
}

private func serve(
  _ etag: String? = sourceTag, _ lastModified: String? = sourceModified,
  faults: [Fault] = []
) -> @Sendable (TestHTTPServer) -> String {
  { server in
    server.serve(path: "/file", body: probeBody, etag: etag, lastModified: lastModified)
    if !faults.isEmpty { server.setFaults(path: "/file", faults) }
    return "/file"
  }
}

private let allResume: [ProbeOutcome] = [.resumes, .resumes, .resumes, .resumes, .resumes]
private let noReasons: [[String]] = [[], [], [], [], []]

let probeCases: [ProbeCase] = [
  ProbeCase(
    name: "strong ETag, ranges and If-Range honoured", setUp: serve(), findings: [],
    outcomes: allResume, reasons: noReasons),
  ProbeCase(
    name: "no validator", setUp: serve(nil, nil), findings: ["no-validator"],
    outcomes: [.noResumeData, .noResumeData, .restartsFromZero, .resumes, .resumes],
    reasons: [["no-validator"], ["no-validator"], ["no-validator"], [], []]),
  ProbeCase(
    name: "weak ETag only", setUp: serve("W/\"v1\"", nil), findings: ["weak-etag"],
    outcomes: [.restartsFromZero, .restartsFromZero, .restartsFromZero, .resumes, .resumes],
    reasons: [["weak-etag"], ["weak-etag"], ["weak-etag"], [], []]),
  ProbeCase(
    name: "an ETag that changes with every request",
    setUp: serve(faults: [.etagPerRequest]), findings: ["validator-unstable"],
    outcomes: [.restartsFromZero, .restartsFromZero, .restartsFromZero, .resumes, .resumes],
    reasons: [["validator-unstable"], ["validator-unstable"], ["validator-unstable"], [], []]),
  ProbeCase(
    name: "Last-Modified only", setUp: serve(nil), findings: ["last-modified-only"],
    outcomes: allResume, reasons: noReasons),
  ProbeCase(
    name: "ranges ignored", setUp: serve(faults: [.ignoreRange]), findings: ["ranges-ignored"],
    outcomes: [.restartsFromZero, .restartsFromZero, .restartsFromZero, .fails, .restartsFromZero],
    reasons: [
      ["ranges-ignored"], ["ranges-ignored"], ["ranges-ignored"], ["ranges-ignored"],
      ["ranges-ignored"],
    ]),
  ProbeCase(
    name: "If-Range ignored", setUp: serve(faults: [.ignoreIfRange]),
    findings: ["if-range-ignored"], outcomes: allResume,
    reasons: [["if-range-ignored"], ["if-range-ignored"], [], [], []]),
  ProbeCase(
    name: "416 to every range", setUp: serve(faults: [.refuseRanges]),
    findings: ["ranges-refused"],
    outcomes: [
      .restartsFromZero, .restartsFromZero, .restartsFromZero, .completesShort, .completesShort,
    ],
    reasons: [
      ["ranges-refused"], ["ranges-refused"], ["ranges-refused"], ["ranges-refused"],
      ["ranges-refused"],
    ]),
  ProbeCase(
    name: "gzip for clients that accept it", setUp: serve(faults: [.gzipForGzipClients]),
    findings: ["compressed-for-default-encoding"],
    outcomes: [.restartsFromZero, .restartsFromZero, .resumes, .resumes, .resumes],
    reasons: [
      ["compressed-for-default-encoding"], ["compressed-for-default-encoding"], [], [], [],
    ]),
  ProbeCase(
    name: "a redirect to a signed URL",
    setUp: { server in
      server.serve(path: "/file", body: probeBody, etag: sourceTag)
      server.setFaults(
        path: "/start",
        [
          .redirect(
            to: server.baseURL.absoluteString
              + "/file?X-Amz-Date=20261207T120000Z&X-Amz-Expires=3600&X-Amz-Signature=ab12")
        ])
      return "/start"
    }, findings: ["signed-url"],
    outcomes: [.resumesUntilExpiry, .resumesUntilExpiry, .resumesUntilExpiry, .resumes, .resumes],
    reasons: [["signed-url"], ["signed-url"], ["signed-url"], [], []]),
  ProbeCase(
    name: "a redirect to another host",
    setUp: { server in
      server.serve(path: "/file", body: probeBody, etag: sourceTag)
      server.setFaults(
        path: "/start", [.redirect(to: server.localhostBaseURL.absoluteString + "/file")])
      return "/start"
    }, findings: ["redirect-cross-host"], outcomes: allResume, reasons: noReasons),
  ProbeCase(
    name: "chunked, without a length", setUp: serve(faults: [.chunked]),
    findings: ["no-content-length"], outcomes: allResume, reasons: noReasons),
  ProbeCase(
    name: "404", setUp: { _ in "/missing" }, findings: ["http-status"],
    outcomes: [.fails, .fails, .fails, .fails, .fails],
    reasons: [["http-status"], ["http-status"], ["http-status"], ["http-status"], ["http-status"]]
  ),
  ProbeCase(
    name: "503", setUp: serve(faults: [.status(503, body: Data("busy".utf8))]),
    findings: ["http-status"], outcomes: [.fails, .fails, .fails, .fails, .fails],
    reasons: [["http-status"], ["http-status"], ["http-status"], ["http-status"], ["http-status"]]
  ),
  ProbeCase(
    name: "a POST download", setUp: serve(), method: "POST", findings: ["not-get"],
    outcomes: [.noResumeData, .noResumeData, .fails, .resumes, .resumes],
    reasons: [["not-get"], ["not-get"], ["not-get"], [], []]),
]

@Suite("Probe: what each client does with a URL on resume")
struct ProbeTests {
  @Test("Each server behaviour gets its exact findings and verdicts", arguments: probeCases)
  func behaviour(_ probeCase: ProbeCase) async throws {
    let server = try TestHTTPServer(configuration: quickServer)
    defer { server.stop() }
    let path = probeCase.setUp(server)
    var options = ProbeOptions()
    options.method = probeCase.method
    options.timeout = .seconds(30)
    options.now = { probeNow }
    let report = try await Probe.run(
      URL(string: server.baseURL.absoluteString + path)!, options: options)
    #expect(report.findings.map(\.code) == probeCase.findings)
    #expect(report.verdicts.map(\.consumer) == ProbeConsumer.allCases)
    #expect(report.verdicts.map(\.outcome) == probeCase.outcomes)
    #expect(report.verdicts.map(\.reasons) == probeCase.reasons)
    #expect(report.resumesEverywhere == (probeCase.outcomes == allResume))
    // Only the Network.framework loader's verdict is inferred.
    #expect(report.verdicts.map { $0.inferred != nil } == [false, true, false, false, false])
    // curl and wget never send a validator.
    #expect(report.verdicts[3].splicesChangedFile == (probeCase.outcomes[3] == .resumes))
  }

  @Test("The requests: eleven by default, each small, the ranges and validators as documented")
  func requests() async throws {
    let server = try TestHTTPServer(configuration: quickServer)
    defer { server.stop() }
    server.serve(path: "/file", body: probeBody, etag: sourceTag, lastModified: sourceModified)
    let report = try await Probe.run(server.baseURL.appendingPathComponent("file"))
    let logged = server.requests(path: "/file")
    #expect(logged.map(\.method) == Array(repeating: "GET", count: 11))
    #expect(
      logged.map { [$0.header("Range"), $0.header("If-Range"), $0.header("Accept-Encoding")] } == [
        [nil, nil, "identity"],
        ["bytes=0-1023", nil, "identity"],
        ["bytes=50000-51023", nil, "identity"],
        ["bytes=50000-51023", sourceTag, "identity"],
        ["bytes=50000-51023", "\"resumedata-probe-mismatch\"", "identity"],
        [nil, nil, "identity"], [nil, nil, "identity"], [nil, nil, "identity"],
        [nil, nil, "identity"],
        [nil, nil, "gzip, deflate, br"],
        ["bytes=50000-", sourceTag, "gzip, deflate, br"],
      ])
    // Each on a connection of its own.
    #expect(Set(logged.map(\.connection)).count == 11)
    #expect(
      report.responses.map(\.kind.rawValue) == [
        "plain", "range-start", "range-middle", "if-range", "wrong-if-range", "repeated",
        "repeated", "repeated", "repeated", "default-encoding", "default-encoding-if-range",
      ])
    #expect(report.bytesRead == 4096)
    #expect(report.responses[3].body == probeBody[50_000..<51_024])
  }

  @Test("--requests, and a given Accept-Encoding standing for URLSession's default")
  func options() async throws {
    let server = try TestHTTPServer(configuration: quickServer)
    defer { server.stop() }
    server.serve(path: "/file", body: probeBody, etag: sourceTag)
    server.setFaults(path: "/file", [.gzipForGzipClients])
    var options = ProbeOptions()
    options.requests = 2
    options.headers = [("Accept-Encoding", "identity"), ("X-Token", "t")]
    let report = try await Probe.run(
      server.baseURL.appendingPathComponent("file"), options: options)
    #expect(server.requests(path: "/file").count == 8)
    #expect(server.requests(path: "/file").allSatisfy { $0.header("X-Token") == "t" })
    #expect(report.findings.isEmpty)
    #expect(report.resumesEverywhere)
  }

  @Test(
    "The judgement alone (FuzzProbe's first crash): an answer to the default Accept-Encoding with other validators"
  )
  func defaultEncodingDiffers() {
    func answer(_ kind: ProbeRequestKind, _ status: Int, _ headers: [(String, String)])
      -> ProbeResponse
    {
      let encoding = kind == .defaultEncoding ? "gzip, deflate, br" : "identity"
      return ProbeResponse(
        kind: kind, url: "http://127.0.0.1/f",
        sent: [.init("Range", "bytes=100-199"), .init("Accept-Encoding", encoding)],
        finalURL: "http://127.0.0.1/f", status: status,
        headers: headers.map { ProbeResponse.HeaderField($0.0, $0.1) })
    }
    let strong = [("ETag", "\"v1\""), ("Content-Length", "300")]
    let ranged = strong + [("Content-Range", "bytes 100-199/300")]
    let (findings, verdicts) = Probe.judge(
      "http://127.0.0.1/f",
      responses: [
        answer(.plain, 200, strong), answer(.rangeMiddle, 206, ranged),
        answer(.ifRange, 206, ranged), answer(.wrongIfRange, 200, strong),
        answer(.defaultEncoding, 200, [("Content-Length", "300")]),
      ])
    #expect(findings.map(\.code) == ["default-encoding-differs"])
    #expect(
      verdicts.map(\.outcome) == [.noResumeData, .noResumeData, .resumes, .resumes, .resumes])
    #expect(verdicts[0].reasons == ["default-encoding-differs"])
  }

  @Test("A slow server: the probe ends at its timeout with timed-out")
  func timeout() async throws {
    let server = try TestHTTPServer(configuration: quickServer)
    defer { server.stop() }
    server.serve(path: "/file", body: probeBody, etag: sourceTag)
    server.setFaults(path: "/file", [.delay(.seconds(30))])
    var options = ProbeOptions()
    options.timeout = .milliseconds(500)
    await #expect(throws: ProbeError.self) {
      try await Probe.run(server.baseURL.appendingPathComponent("file"), options: options)
    }
    do {
      _ = try await Probe.run(server.baseURL.appendingPathComponent("file"), options: options)
    } catch {
      #expect(error.code == .timedOut)
    }
  }

  @Test(
    "Refused before any request: not http(s), an unsendable header, --requests out of range",
    arguments: [
      ("ftp://127.0.0.1/x", [(String, String)](), 5, ProbeError.Code.unsupportedURL),
      ("http:///x", [], 5, .unsupportedURL),
      ("http://127.0.0.1:9/x", [("X", "a\nb")], 5, .invalidOption),
      ("http://127.0.0.1:9/x", [], 0, .invalidOption),
    ])
  func refused(url: String, headers: [(String, String)], requests: Int, code: ProbeError.Code)
    async
  {
    var options = ProbeOptions()
    options.headers = headers.map { (name: $0.0, value: $0.1) }
    options.requests = requests
    do {
      _ = try await Probe.run(URL(string: url)!, options: options)
      Issue.record("probed")
    } catch {
      #expect(error.code == code)
    }
  }

  @Test("A port nobody listens on: network")
  func unreachable() async throws {
    let server = try TestHTTPServer(configuration: quickServer)
    let url = server.baseURL.appendingPathComponent("file")
    server.stop()
    do {
      _ = try await Probe.run(url)
      Issue.record("probed")
    } catch {
      #expect(error.code == .network)
    }
  }

  @Test(
    "Signed URLs: the scheme and when they expire",
    arguments: [
      (
        "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20261207T120000Z&X-Amz-Expires=3600&X-Amz-Signature=ab",
        "aws-sigv4", "2026-12-07T13:00:00Z"
      ),
      (
        "https://storage.googleapis.com/b/k?x-goog-date=20261231T235959Z&x-goog-expires=2&X-Goog-Signature=ab",
        "google-v4", "2027-01-01T00:00:01Z"
      ),
      (
        "https://d.cloudfront.net/k?Expires=1796650200&Signature=ab&Key-Pair-Id=K",
        "expires-signature", "2026-12-07T13:30:00Z"
      ),
      (
        "https://a.blob.core.windows.net/c/k?sv=2022-11-02&se=2026-12-08T01:02Z&sig=ab",
        "azure-sas", "2026-12-08T01:02:00Z"
      ),
      (
        "https://a.blob.core.windows.net/c/k?se=2028-02-29&sig=ab", "azure-sas",
        "2028-02-29T00:00:00Z"
      ),
      ("https://x/k?X-Amz-Expires=60&X-Amz-Signature=ab", "aws-sigv4", ""),
    ])
  func signed(url: String, scheme: String, expires: String) throws {
    let signed = try #require(SignedURL(URL(string: url)!))
    #expect(signed.scheme.rawValue == scheme)
    #expect(signed.expires.map(SignedURL.text) ?? "" == expires)
  }

  @Test(
    "Hostile signature values: no expiry, never a trap",
    arguments: [
      "https://x/k?Expires=9223372036854775807&Signature=ab",
      "https://x/k?Expires=-1&Signature=ab",
      "https://x/k?se=&sig=ab",
      "https://x/k?se=T&sig=ab",
      "https://x/k?se=2026-13-01&sig=ab",
      "https://x/k?X-Amz-Date=99999999T999999Z&X-Amz-Expires=99999999999999999999&X-Amz-Signature=a",
      "https://x/k?X-Goog-Date=&X-Goog-Expires=1&X-Goog-Signature=a",
    ])
  func hostileSignatures(url: String) throws {
    let signed = try #require(SignedURL(URL(string: url)!))
    #expect(signed.expires == nil)
    #expect(SignedURL.text(Date(timeIntervalSince1970: 1e300)) == "9999-12-31T23:59:59Z")
  }

  @Test(
    "URLs that are not signed",
    arguments: ["https://x/k", "https://x/k?a=1&Expires=5", "https://x/k?se=1"])
  func unsigned(url: String) {
    #expect(SignedURL(URL(string: url)!) == nil)
  }
}

/// Answers a probe could get, for the judgement alone: what no loopback server of the tests gives
/// (TLS, a second file behind the name, a broken 206).
private struct JudgedCase: Sendable, CustomStringConvertible {
  let name: String
  let responses: [ProbeResponse]
  let findings: [String]
  let outcomes: [ProbeOutcome]
  var description: String { name }
}

private func judged(
  _ kind: ProbeRequestKind, _ status: Int, _ headers: [(String, String)] = [],
  body: String = "", redirects: [ProbeRedirect] = [], final: String = "https://h.example/f"
) -> ProbeResponse {
  let sent: [ProbeResponse.HeaderField] =
    switch kind {
    case .rangeMiddle, .ifRange, .wrongIfRange:
      [.init("Range", "bytes=150-299"), .init("Accept-Encoding", "identity")]
    case .defaultEncoding: [.init("Accept-Encoding", "gzip, deflate, br")]
    case .defaultEncodingIfRange:
      [.init("Range", "bytes=150-"), .init("Accept-Encoding", "gzip, deflate, br")]
    default: [.init("Accept-Encoding", "identity")]
    }
  return ProbeResponse(
    kind: kind, url: "http://h.example/f", sent: sent, redirects: redirects, finalURL: final,
    status: status, headers: headers.map { ProbeResponse.HeaderField($0.0, $0.1) },
    body: Data(body.utf8))
}

private let whole = [("ETag", "\"v1\""), ("Content-Length", "300")]
private let part = [("ETag", "\"v1\""), ("Content-Range", "bytes 150-299/300")]
/// The answers of a server that does everything right, after a plain GET of `first`.
private func rightAfter(_ first: ProbeResponse, part: [(String, String)] = part) -> [ProbeResponse]
{
  [
    first, judged(.rangeMiddle, 206, part, body: "abc"), judged(.ifRange, 206, part, body: "abc"),
    judged(.wrongIfRange, 200, whole), judged(.defaultEncoding, 200, whole),
    judged(.defaultEncodingIfRange, 206, part),
  ]
}

private let judgedCases: [JudgedCase] = [
  JudgedCase(
    name: "http to https",
    responses: rightAfter(
      judged(
        .plain, 200, whole,
        redirects: [.init(status: 301, from: "http://h.example/f", to: "https://h.example/f")])),
    findings: ["redirect-to-https"], outcomes: [.resumes, .resumes, .resumes, .resumes, .resumes]),
  JudgedCase(
    name: "https to http",
    responses: rightAfter(
      judged(
        .plain, 200, whole,
        redirects: [.init(status: 302, from: "https://h.example/f", to: "http://h.example/f")],
        final: "http://h.example/f")),
    findings: ["redirect-to-http"], outcomes: [.resumes, .resumes, .resumes, .resumes, .resumes]),
  JudgedCase(
    name: "two files behind the name",
    responses: [
      judged(.plain, 200, whole), judged(.rangeMiddle, 206, part, body: "abc"),
      judged(.ifRange, 206, part, body: "abd"), judged(.wrongIfRange, 200, whole),
      judged(.defaultEncoding, 200, whole), judged(.defaultEncodingIfRange, 206, part),
    ],
    findings: ["content-unstable"], outcomes: [.resumes, .resumes, .resumes, .resumes, .resumes]),
  JudgedCase(
    name: "the length changes, the ETag does not",
    responses: rightAfter(judged(.plain, 200, whole)) + [
      judged(.repeated, 200, [("ETag", "\"v1\""), ("Content-Length", "301")])
    ],
    findings: ["length-unstable"], outcomes: [.resumes, .resumes, .resumes, .resumes, .resumes]),
  JudgedCase(
    name: "a 206 for other bytes",
    responses: rightAfter(
      judged(.plain, 200, whole), part: [("ETag", "\"v1\""), ("Content-Range", "bytes 0-149/300")]),
    findings: ["bad-content-range"],
    outcomes: [.fails, .fails, .restartsFromZero, .fails, .fails]),
  JudgedCase(
    name: "If-Range with its own validator answered 200",
    responses: [
      judged(.plain, 200, whole), judged(.rangeMiddle, 206, part, body: "abc"),
      judged(.ifRange, 200, whole), judged(.wrongIfRange, 200, whole),
      judged(.defaultEncoding, 200, whole), judged(.defaultEncodingIfRange, 200, whole),
    ],
    findings: ["if-range-not-honoured"],
    outcomes: [.restartsFromZero, .restartsFromZero, .restartsFromZero, .resumes, .resumes]),
  JudgedCase(
    name: "encoded even for identity",
    responses: rightAfter(
      judged(.plain, 200, [("ETag", "\"v1\""), ("Content-Encoding", "br")])),
    findings: ["compressed-for-identity"],
    outcomes: [.resumes, .resumes, .restartsFromZero, .resumes, .resumes]),
  JudgedCase(
    name: "an empty file",
    responses: [judged(.plain, 200, [("ETag", "\"v1\""), ("Content-Length", "0")])],
    findings: ["empty-file"], outcomes: [.resumes, .resumes, .resumes, .resumes, .resumes]),
]

@Suite("Probe: the judgement of answers no test server gives")
struct ProbeJudgementTests {
  @Test("Each case's exact findings and outcomes", arguments: judgedCases)
  fileprivate func judge(_ judgedCase: JudgedCase) {
    let (findings, verdicts) = Probe.judge("http://h.example/f", responses: judgedCase.responses)
    #expect(findings.map(\.code) == judgedCase.findings)
    #expect(verdicts.map(\.outcome) == judgedCase.outcomes)
    // A changed file spliced where the answers disagree.
    if judgedCase.findings == ["content-unstable"] || judgedCase.findings == ["length-unstable"] {
      #expect(verdicts.map(\.splicesChangedFile) == [true, true, true, true, true])
    }
  }

  @Test(
    "If-Range ignored: this downloader would splice a changed file only when the 206 names no validator",
    arguments: [(true, false), (false, true)])
  func ifRangeIgnored(validatorIn206: Bool, splices: Bool) {
    let wrongAnswer = validatorIn206 ? part : part.filter { $0.0 != "ETag" }
    let responses = [
      judged(.plain, 200, whole), judged(.rangeMiddle, 206, part, body: "abc"),
      judged(.ifRange, 206, part, body: "abc"),
      judged(.wrongIfRange, 206, wrongAnswer, body: "abc"),
      judged(.defaultEncoding, 200, whole), judged(.defaultEncodingIfRange, 206, part),
    ]
    let (findings, verdicts) = Probe.judge("http://h.example/f", responses: responses)
    #expect(findings.map(\.code) == ["if-range-ignored"])
    #expect(verdicts.map(\.outcome) == [.resumes, .resumes, .resumes, .resumes, .resumes])
    #expect(verdicts.map(\.splicesChangedFile) == [true, true, splices, true, true])
    #expect(verdicts[2].reasons == (splices ? ["if-range-ignored"] : []))
    #expect(
      verdicts[2].summary.hasSuffix(
        "this downloader compares with the one it sent (a changed file starts over)") == !splices)
  }
}

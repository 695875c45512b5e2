import Foundation
import ResumeData

/// A probe's answers judged: the findings (codes in docs/findings.md, "Findings of a probe") and
/// what each consumer does on resume. No I/O: every case is decided from the answers alone.
///
/// What each consumer sends when it resumes, and so which answer decides for it:
/// - Apple's classic loader records the ETag (weak or not), else Last-Modified, of the answer to
///   its default `Accept-Encoding`, makes no resume data without either, and resumes with `Range`
///   and `If-Range` = that value; anything but a 206 truncates the file (format reference §2, §6).
///   Its current request is the URL the redirects led to.
/// - Network.framework's loader is taken to do the same (inferred: its requests were not seen).
/// - This toolkit's downloader asks with `Accept-Encoding: identity`, sends a strong ETag, else
///   Last-Modified, and starts over without one (docs/downloader.md).
/// - `curl -C -` and `wget -c` send `Range` alone (no validator, identity) from the URL given; curl
///   fails on a 200 ("does not seem to support byte ranges", exit 33) and takes a 416 for done;
///   wget (1.21) starts over on a 200 and takes a 416 for "already fully retrieved".
struct ProbeJudgement {
  private(set) var findings: [Finding] = []
  private(set) var verdicts: [ProbeVerdict] = []

  private let responses: [ProbeResponse]
  private let options: ProbeOptions

  init(url: String, responses: [ProbeResponse], options: ProbeOptions) {
    self.responses = responses
    self.options = options
    judge()
  }

  private func first(_ kind: ProbeRequestKind) -> ProbeResponse? {
    responses.first { $0.kind == kind }
  }

  private func has(_ code: String) -> Bool { findings.contains { $0.code == code } }

  /// The first of `codes` that is a finding's, alone; none when none is.
  private func firstFound(_ codes: [String]) -> [String] {
    codes.first(where: has).map { [$0] } ?? []
  }

  private mutating func add(_ code: String, _ severity: Finding.Severity, _ message: String) {
    findings.append(Finding(code, severity, message))
  }

  private static func statusText(_ status: Int) -> String {
    let reason = HTTPURLResponseReason.phrase(status)
    return reason.isEmpty ? "\(status)" : "\(status) \(reason)"
  }

  // MARK: Findings

  private mutating func judge() {
    guard let plain = first(.plain) else { return }
    let method = options.method.uppercased()
    if method != "GET" {
      add(
        "not-get", .error,
        "the download uses \(method): Apple's loaders make resume data only for GET, and this toolkit downloads with GET only (the probe sent GET)"
      )
    }
    redirectFindings(plain)
    guard (200..<300).contains(plain.status), plain.status != 206 else {
      add(
        "http-status", .error,
        "the server answered \(Self.statusText(plain.status)) to GET \(plain.finalURL): there is no file to resume"
      )
      decide(plain)
      return
    }
    if plain.completeLength == 0 {
      add("empty-file", .info, "the file is empty: there is nothing to resume")
    }
    validatorFindings(plain)
    stabilityFindings()
    encodingFindings(plain)
    rangeFindings(plain)
    decide(plain)
    // Most severe first, in the order found within a severity.
    findings = findings.enumerated().sorted {
      ($0.element.severity, -$0.offset) > ($1.element.severity, -$1.offset)
    }.map(\.element)
  }

  private mutating func redirectFindings(_ plain: ProbeResponse) {
    for hop in plain.redirects {
      guard let from = URL(string: hop.from), let to = URL(string: hop.to) else { continue }
      let fromScheme = from.scheme?.lowercased()
      let toScheme = to.scheme?.lowercased()
      if fromScheme == "http", toScheme == "https" {
        add(
          "redirect-to-https", .info,
          "\(hop.from) redirects (\(hop.status)) to https: resume data records the https URL, so resumes go there directly"
        )
      } else if fromScheme == "https", toScheme == "http" {
        add(
          "redirect-to-http", .warning,
          "\(hop.from) redirects (\(hop.status)) to plain http (\(hop.to)): App Transport Security blocks it on Apple's systems unless the app allows that host"
        )
      }
      if from.host?.lowercased() != to.host?.lowercased() {
        add(
          "redirect-cross-host", .info,
          "\(hop.from) redirects (\(hop.status)) to another host, \(to.host ?? ""): resume data records that host's URL, and resumes go straight there (this toolkit drops Authorization and Cookie on the way)"
        )
      }
    }
    guard let final = URL(string: plain.finalURL), let signed = SignedURL(final) else { return }
    let when: String
    if let expires = signed.expires {
      let text = SignedURL.text(expires)
      when = expires <= options.now() ? "expired at \(text)" : "expires at \(text)"
    } else {
      when = "expires at a time its query does not say"
    }
    if plain.redirects.isEmpty {
      add(
        "signed-url", .warning,
        "the URL is signed (\(signed.scheme.rawValue)) and \(when): a resume after that fails; ask for a new signed URL and point the resume data at it (`resumedata edit BLOB --url NEW -o BLOB`)"
      )
    } else {
      add(
        "signed-url", .warning,
        "the redirects end at a signed URL (\(signed.scheme.rawValue)) that \(when), and resume data records it as the current request: a resume after that fails; point the resume data back at the stable URL before resuming (`resumedata edit BLOB --url \(plain.url) -o BLOB`)"
      )
    }
  }

  private mutating func validatorFindings(_ plain: ProbeResponse) {
    if plain.entityTag == nil, plain.lastModified == nil {
      add(
        "no-validator", .error,
        "the response has neither an ETag nor a Last-Modified date: Apple's loaders make no resume data (cancel(byProducingResumeData:) hands back nil), and no client can check that a continuation is of the same file"
      )
    } else if plain.entityTag == nil {
      add(
        "last-modified-only", .info,
        "the only validator is Last-Modified (\(plain.lastModified ?? "")), to the second: a file replaced within the second the download began is not told apart"
      )
    } else if let tag = plain.entityTag, tag.hasPrefix("W/") {
      let fallback =
        plain.lastModified != nil
        ? "; this toolkit falls back to Last-Modified"
        : ", and there is no Last-Modified to fall back to"
      add(
        "weak-etag", .error,
        "the ETag is weak (\(tag)): Apple's loaders send it as If-Range, which a server must not match (RFC 9110 §13.1.5), so every resume restarts from zero\(fallback)"
      )
    }
  }

  private mutating func encodingFindings(_ plain: ProbeResponse) {
    if let coding = plain.contentEncoding {
      add(
        "compressed-for-identity", .error,
        "even with Accept-Encoding: identity the body is \(coding)-encoded: byte ranges of it are not ranges of the file"
      )
    } else if plain.contentLength == nil {
      let chunked = plain.header("Transfer-Encoding").map { " (Transfer-Encoding: \($0))" } ?? ""
      add(
        "no-content-length", .warning,
        "the response has no Content-Length\(chunked): progress has no total, and the length is known only from a 206's Content-Range"
      )
    }
    guard let encoded = first(.defaultEncoding), (200..<300).contains(encoded.status),
      plain.contentEncoding == nil
    else { return }
    guard let coding = encoded.contentEncoding else {
      // Not encoded, yet other validators: what Apple's loaders record is not what was checked.
      if encoded.entityTag != plain.entityTag || encoded.lastModified != plain.lastModified,
        !has("validator-unstable")
      {
        let given = [
          encoded.entityTag.map { "ETag \($0)" },
          encoded.lastModified.map { "Last-Modified \($0)" },
        ].compactMap { $0 }
        add(
          "default-encoding-differs", .warning,
          "for URLSession's default Accept-Encoding (\(encoded.sentHeader("Accept-Encoding") ?? "")) the server gives \(given.isEmpty ? "no validator" : given.joined(separator: ", ")), not what it gives for identity: Apple's loaders record that"
        )
      }
      return
    }
    var changes = [String]()
    if encoded.entityTag != plain.entityTag {
      changes.append(
        encoded.entityTag.map { "the ETag \($0) in place of \(plain.entityTag ?? "none")" }
          ?? "no ETag")
    }
    if encoded.contentLength == nil { changes.append("no Content-Length") }
    if let resumed = first(.defaultEncodingIfRange), resumed.status != 206 {
      changes.append("a \(resumed.status) to Range with If-Range")
    }
    let what = changes.isEmpty ? "" : ", with " + changes.joined(separator: ", ")
    add(
      "compressed-for-default-encoding", .warning,
      "for URLSession's default Accept-Encoding (\(encoded.sentHeader("Accept-Encoding") ?? "")) the body is \(coding)-encoded\(what): Apple's loaders download and resume that; setting Accept-Encoding: identity on the request gets the file as stored"
    )
  }

  private mutating func rangeFindings(_ plain: ProbeResponse) {
    guard let middle = first(.rangeMiddle) else { return }
    let asked = middle.sentHeader("Range") ?? ""
    switch middle.status {
    case 206:
      let start = HTTPRange.parseSingle(asked).flatMap { spec -> Int64? in
        if case .span(let start, _) = spec { return start }
        return nil
      }
      if middle.contentRange?.range?.lowerBound != start || middle.contentEncoding != nil {
        add(
          "bad-content-range", .error,
          "Range: \(asked) was answered 206 with Content-Range: \(middle.header("Content-Range") ?? "none")\(middle.contentEncoding.map { ", \($0)-encoded" } ?? ""): not the bytes asked for"
        )
      }
    case 200:
      let accept = middle.header("Accept-Ranges").map { " (Accept-Ranges: \($0))" } ?? ""
      add(
        "ranges-ignored", .error,
        "Range: \(asked) was answered 200 with the whole file\(accept): the server ignores ranges, so no client can continue"
      )
    default:
      add(
        "ranges-refused", .error,
        "Range: \(asked) was answered \(Self.statusText(middle.status)) though the file is longer: the server refuses ranges"
      )
    }
    guard middle.status == 206, !has("bad-content-range") else { return }
    if let good = first(.ifRange), good.status != 206, !has("validator-unstable") {
      add(
        "if-range-not-honoured", .error,
        "Range with If-Range: \(good.sentHeader("If-Range") ?? "") (the validator the server gave) was answered \(Self.statusText(good.status)): the server does not match its own validator, so every conditional resume restarts"
      )
    }
    if let wrong = first(.wrongIfRange), wrong.status == 206 {
      add(
        "if-range-ignored", .warning,
        "Range with If-Range: \(wrong.sentHeader("If-Range") ?? "") (a validator the server never gave) was answered 206: the server ignores If-Range, so a changed file would be spliced by clients that trust it (Apple's loaders; this toolkit's downloader unless the 206 names the validator)"
      )
    }
    if let good = first(.ifRange), good.status == 206, good.contentRange == middle.contentRange,
      good.body != middle.body
    {
      add(
        "content-unstable", .error,
        "two answers for the same range (\(asked)) hold different bytes: the servers behind the URL hold different files"
      )
    }
  }

  private mutating func stabilityFindings() {
    let answers = responses.filter {
      (200..<300).contains($0.status) && $0.sentHeader("Accept-Encoding") == "identity"
    }
    func distinct(_ values: [String?]) -> [String] {
      var seen = [String]()
      for case let value? in values where !seen.contains(value) { seen.append(value) }
      return seen
    }
    let tags = distinct(answers.map(\.entityTag))
    let dates = distinct(answers.map(\.lastModified))
    let lengths = distinct(answers.map { $0.completeLength.map(String.init) })
    let differing = [("ETags", tags), ("Last-Modified dates", dates)].filter { $0.1.count > 1 }
    if !differing.isEmpty {
      let what = differing.map {
        "\($0.1.count) different \($0.0) (\($0.1.joined(separator: ", ")))"
      }
      add(
        "validator-unstable", .error,
        "\(answers.count) answers gave \(what.joined(separator: " and ")): servers behind the URL disagree, so a resume that reaches another one restarts (or, without If-Range, splices)"
      )
    }
    if lengths.count > 1 {
      add(
        "length-unstable", .error,
        "\(answers.count) answers gave \(lengths.count) different lengths (\(lengths.joined(separator: ", "))): the file is not the same from one request to the next"
      )
    }
  }

  // MARK: Verdicts

  private mutating func decide(_ plain: ProbeResponse) {
    let apple = appleVerdict(plain)
    verdicts = [
      apple,
      ProbeVerdict(
        consumer: .networkFramework, outcome: apple.outcome, reasons: apple.reasons,
        summary: apple.summary, splicesChangedFile: apple.splicesChangedFile,
        expires: apple.expires,
        inferred:
          "taken to resume as the classic loader does: its resume requests were not observed"
      ),
      ownVerdict(plain), rangeOnlyVerdict(.curl, plain), rangeOnlyVerdict(.wget, plain),
    ]
  }

  /// The expiry of the signed URL a resume from resume data goes to, when there is one.
  private var signedExpiry: (Bool, Date?) {
    guard let plain = first(.plain), let final = URL(string: plain.finalURL),
      let signed = SignedURL(final)
    else { return (false, nil) }
    return (true, signed.expires)
  }

  /// Whether a changed file would be spliced by a client that sends If-Range.
  private var conditionalSplices: Bool {
    has("if-range-ignored") || has("length-unstable") || has("content-unstable")
  }

  private func verdict(
    _ consumer: ProbeConsumer, _ outcome: ProbeOutcome, _ reasons: [String], _ summary: String,
    splices: Bool = false, expires: Date? = nil
  ) -> ProbeVerdict {
    ProbeVerdict(
      consumer: consumer, outcome: outcome, reasons: reasons, summary: summary,
      splicesChangedFile: splices, expires: expires, inferred: nil)
  }

  /// The verdict of a client that resumes from resume data with a conditional request:
  /// Apple's loader (`encoded`, its default Accept-Encoding) or this toolkit (identity).
  private func resumed(
    _ consumer: ProbeConsumer, answer: ProbeResponse?, validator: String, splices: Bool
  ) -> ProbeVerdict {
    let (signed, expires) = signedExpiry
    if has("validator-unstable") {
      return verdict(
        consumer, .restartsFromZero, ["validator-unstable"],
        "restarts from zero whenever a resume reaches a server with another validator"
      )
    }
    if signed {
      let until = expires.map { "until \(SignedURL.text($0))" } ?? "until the signed URL expires"
      return verdict(
        consumer, .resumesUntilExpiry, ["signed-url"],
        "resumes \(until) (If-Range: \(validator)); after that the signed URL in its resume data fails",
        splices: splices, expires: expires)
    }
    let range = answer?.header("Content-Range").map { ", Content-Range: \($0)" } ?? ""
    return verdict(
      consumer, .resumes, splices ? ["if-range-ignored"].filter(has) : [],
      "resumes (Range with If-Range: \(validator) answered 206\(range))"
        + (splices
          ? "; a changed file would be spliced, as the server does not check If-Range" : ""),
      splices: splices)
  }

  private func appleVerdict(_ plain: ProbeResponse) -> ProbeVerdict {
    if has("http-status") {
      return verdict(
        .apple, .fails, ["http-status"],
        "fails: the server answered \(Self.statusText(plain.status))")
    }
    if has("not-get") {
      return verdict(
        .apple, .noResumeData, ["not-get"],
        "makes no resume data: cancel(byProducingResumeData:) hands back nil for any method but GET"
      )
    }
    guard let encoded = first(.defaultEncoding) ?? first(.plain) else {
      return verdict(.apple, .fails, [], "not probed")
    }
    guard (200..<300).contains(encoded.status) else {
      return verdict(
        .apple, .fails, ["compressed-for-default-encoding"].filter(has),
        "fails: the server answered \(Self.statusText(encoded.status)) to the default Accept-Encoding"
      )
    }
    guard let validator = encoded.entityTag ?? encoded.lastModified else {
      let reasons = firstFound([
        "no-validator", "compressed-for-default-encoding", "default-encoding-differs",
      ])
      return verdict(
        .apple, .noResumeData, reasons,
        "makes no resume data: cancel(byProducingResumeData:) hands back nil, as the response to its default Accept-Encoding has neither ETag nor Last-Modified"
      )
    }
    if has("empty-file") {
      return verdict(
        .apple, .resumes, [], "resumes: the file is empty, so there is nothing to lose")
    }
    let resumeAnswer = first(.defaultEncodingIfRange)
    // A 206 for other bytes than the resume asked for: what CFNetwork does with one is not known.
    if let answer = resumeAnswer, answer.status == 206, answer.contentEncoding == nil,
      let asked = answer.sentHeader("Range").flatMap(HTTPRange.parseSingle),
      case .from(let start) = asked, answer.contentRange?.range?.lowerBound != start
    {
      return verdict(
        .apple, .fails, firstFound(["bad-content-range"]),
        "fails: Range with If-Range: \(validator) was answered 206 with Content-Range: \(answer.header("Content-Range") ?? "none"), not the bytes asked for (taken for a failure: what the loader does with it is not known)"
      )
    }
    if let answer = resumeAnswer, answer.status != 206 || answer.contentEncoding != nil {
      var reasons = [String]()
      if validator.hasPrefix("W/") {
        reasons += firstFound([
          "weak-etag", "compressed-for-default-encoding", "default-encoding-differs",
        ])
      }
      for code in [
        "compressed-for-default-encoding", "ranges-ignored", "ranges-refused", "bad-content-range",
        "if-range-not-honoured", "validator-unstable",
      ] where has(code) && !reasons.contains(code) {
        reasons.append(code)
      }
      let outcome: ProbeOutcome =
        answer.status == 200 || answer.status == 206 || answer.status == 416
        ? .restartsFromZero : .fails
      let coding = answer.contentEncoding.map { ", \($0)-encoded" } ?? ""
      return verdict(
        .apple, outcome, reasons,
        "\(outcome.phrase): resume data is made, but Range with If-Range: \(validator) was answered \(Self.statusText(answer.status))\(coding)"
      )
    }
    return resumed(.apple, answer: resumeAnswer, validator: validator, splices: conditionalSplices)
  }

  private func ownVerdict(_ plain: ProbeResponse) -> ProbeVerdict {
    if has("http-status") {
      return verdict(
        .resumedata, .fails, ["http-status"],
        "fails: the server answered \(Self.statusText(plain.status))")
    }
    if has("not-get") {
      return verdict(.resumedata, .fails, ["not-get"], "fails: it downloads with GET only")
    }
    guard let validator = ProbeRunValidator.strong(plain) else {
      let reasons = has("weak-etag") ? ["weak-etag"] : ["no-validator"]
      return verdict(
        .resumedata, .restartsFromZero, reasons,
        "restarts from zero: without a strong ETag or a Last-Modified date it never trusts the partial file"
      )
    }
    if has("empty-file") {
      return verdict(
        .resumedata, .resumes, [], "resumes: the file is empty, so there is nothing to lose")
    }
    for code in [
      "compressed-for-identity", "ranges-ignored", "ranges-refused", "bad-content-range",
      "if-range-not-honoured",
    ] where has(code) {
      let answer = first(code == "if-range-not-honoured" ? .ifRange : .rangeMiddle)
      return verdict(
        .resumedata, .restartsFromZero, [code],
        "restarts from zero: \(answer.map { "Range\(code == "if-range-not-honoured" ? " with If-Range" : "") was answered \(Self.statusText($0.status))" } ?? code)"
      )
    }
    var verdict = resumed(
      .resumedata, answer: first(.ifRange), validator: validator, splices: downloaderSplices)
    if has("if-range-ignored"), !downloaderSplices, verdict.outcome == .resumes {
      verdict.summary +=
        "; the server ignores If-Range, but its 206 names the validator, which this downloader compares with the one it sent (a changed file starts over)"
    }
    return verdict
  }

  /// Whether this toolkit's downloader would splice a changed file. It compares the validator a
  /// 206 carries with the one it sent as If-Range, so a server that ignores If-Range but names its
  /// validator in the 206 (as nginx and Apache do) is caught; unstable answers under one
  /// validator are not.
  private var downloaderSplices: Bool {
    if has("length-unstable") || has("content-unstable") { return true }
    guard has("if-range-ignored") else { return false }
    guard let plain = first(.plain), let answer = first(.wrongIfRange) else { return true }
    if let tag = plain.entityTag, !tag.hasPrefix("W/") { return answer.entityTag == nil }
    return answer.lastModified == nil
  }

  private func rangeOnlyVerdict(_ consumer: ProbeConsumer, _ plain: ProbeResponse) -> ProbeVerdict {
    if has("http-status") {
      return verdict(
        consumer, .fails, ["http-status"],
        "fails: the server answered \(Self.statusText(plain.status))")
    }
    let never = "; it never checks that the file is unchanged, so a changed file would be spliced"
    guard let middle = first(.rangeMiddle) else {
      return verdict(
        consumer, .resumes, [], "resumes: the file is empty, so there is nothing to lose")
    }
    // It starts again from the URL given, so a signed URL the redirects lead to does not last
    // in what it resumes from; a signed URL given to it does.
    let givenSigned = plain.redirects.isEmpty && has("signed-url")
    switch middle.status {
    case 206 where !has("bad-content-range"):
      if givenSigned {
        return verdict(
          consumer, .resumesUntilExpiry, ["signed-url"],
          "resumes until the signed URL given to it expires (Range answered 206)" + never,
          splices: true, expires: signedExpiry.1)
      }
      return verdict(
        consumer, .resumes, [],
        "resumes (Range without a validator answered 206)" + never, splices: true)
    case 206:
      return verdict(
        consumer, .fails, ["bad-content-range"],
        "fails: the 206 is not for the bytes asked")
    case 200:
      // Seen with curl 7.88 and wget 1.21.3 against nginx's `max_ranges 0`.
      return consumer == .curl
        ? verdict(
          consumer, .fails, ["ranges-ignored"],
          "fails: a 200 to Range means the server does not support byte ranges (curl exits 33)")
        : verdict(
          consumer, .restartsFromZero, ["ranges-ignored"],
          "restarts from zero: wget takes the 200 to its Range and fetches the whole file again")
    case 416:
      return verdict(
        consumer, .completesShort, ["ranges-refused"],
        consumer == .curl
          ? "completes with a short file: curl takes a 416 to its Range for a file already complete"
          : "completes with a short file: wget takes a 416 for \"the file is already fully retrieved\""
      )
    default:
      return verdict(
        consumer, .fails, ["ranges-refused"],
        "fails: Range was answered \(Self.statusText(middle.status))")
    }
  }
}

/// The validator this toolkit's downloader sends as If-Range.
enum ProbeRunValidator {
  /// A strong ETag, else Last-Modified.
  static func strong(_ response: ProbeResponse) -> String? {
    if let tag = response.entityTag, !tag.hasPrefix("W/") { return tag }
    return response.lastModified
  }
}

/// Reason phrases of the statuses a probe meets, for its messages (the same on every platform).
enum HTTPURLResponseReason {
  static func phrase(_ status: Int) -> String {
    switch status {
    case 200: "OK"
    case 206: "Partial Content"
    case 301: "Moved Permanently"
    case 302: "Found"
    case 303: "See Other"
    case 304: "Not Modified"
    case 307: "Temporary Redirect"
    case 308: "Permanent Redirect"
    case 400: "Bad Request"
    case 401: "Unauthorized"
    case 403: "Forbidden"
    case 404: "Not Found"
    case 405: "Method Not Allowed"
    case 410: "Gone"
    case 412: "Precondition Failed"
    case 416: "Range Not Satisfiable"
    case 429: "Too Many Requests"
    case 500: "Internal Server Error"
    case 501: "Not Implemented"
    case 502: "Bad Gateway"
    case 503: "Service Unavailable"
    case 504: "Gateway Timeout"
    default: ""
    }
  }
}

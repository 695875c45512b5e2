import Downloader
import Foundation

/// libFuzzer's entry point: the probe's judgement of answers a hostile server could give, and the
/// signed-URL reading of the URL it redirects to. The input's lines: the first is the URL the
/// redirects end at; each later one is an answer, `KIND STATUS` then `Name: value` fields separated
/// by `|` (KIND an index into the request kinds). Checks: no trap, a verdict for every client in
/// order, a client that resumes has no reason but `if-range-ignored`, every reason is a finding's
/// code, and an expiry (when there is one) is written within years 1970 to 9999.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
  let text = String(decoding: UnsafeRawBufferPointer(start: start, count: count), as: UTF8.self)
  let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
  let final = lines.first ?? ""
  if let url = URL(string: final), let signed = SignedURL(url), let expires = signed.expires {
    let written = SignedURL.text(expires)
    guard written.count == 20, written.hasSuffix("Z") else { fatalError("expiry \(written)") }
  }
  let kinds = ProbeRequestKind.allCases
  var responses = [ProbeResponse]()
  for line in lines.dropFirst().prefix(64) {
    let parts = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
    let head = (parts.first ?? "").split(separator: " ")
    let kind =
      responses.isEmpty ? .plain : kinds[(head.first.flatMap { Int($0) } ?? 0) & 7 % kinds.count]
    let status = head.count > 1 ? Int(head[1]) ?? 200 : 200
    let headers = parts.dropFirst().compactMap { field -> ProbeResponse.HeaderField? in
      guard let colon = field.firstIndex(of: ":") else { return nil }
      return ProbeResponse.HeaderField(
        String(field[..<colon]),
        String(field[field.index(after: colon)...]).trimmingCharacters(in: .whitespaces))
    }
    let sent: [ProbeResponse.HeaderField] =
      switch kind {
      case .rangeMiddle, .ifRange, .wrongIfRange:
        [.init("Range", "bytes=100-199"), .init("Accept-Encoding", "identity")]
      case .defaultEncoding: [.init("Accept-Encoding", "gzip, deflate, br")]
      case .defaultEncodingIfRange:
        [.init("Range", "bytes=100-"), .init("Accept-Encoding", "gzip, deflate, br")]
      default: [.init("Accept-Encoding", "identity")]
      }
    responses.append(
      ProbeResponse(
        kind: kind, url: "http://127.0.0.1/f", sent: sent, finalURL: final, status: status,
        headers: headers, body: Data(line.utf8.prefix(16))))
  }
  guard !responses.isEmpty else { return 0 }
  let (findings, verdicts) = Probe.judge("http://127.0.0.1/f", responses: responses)
  guard verdicts.map(\.consumer) == ProbeConsumer.allCases else { fatalError("verdicts") }
  let codes = Set(findings.map(\.code))
  for verdict in verdicts {
    guard verdict.reasons.allSatisfy(codes.contains) else {
      fatalError("a reason that is no finding: \(verdict.reasons) \(codes)")
    }
    if verdict.resumes, verdict.reasons.contains(where: { $0 != "if-range-ignored" }) {
      fatalError("resumes for a reason: \(verdict)")
    }
  }
  return 0
}

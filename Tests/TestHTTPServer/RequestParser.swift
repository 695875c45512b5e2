/// A request head that parsed.
struct ParsedRequest {
  var method: String
  var target: String
  var path: String
  var query: String?
  var version: String
  var headers: [HTTPHeaderField]

  func header(_ name: String) -> String? {
    let wanted = name.lowercased()
    return headers.first { $0.name.lowercased() == wanted }?.value
  }

  func headerValues(_ name: String) -> [String] {
    let wanted = name.lowercased()
    return headers.filter { $0.name.lowercased() == wanted }.map(\.value)
  }

  /// The comma-separated tokens of every `Connection` header, lowercased.
  var connectionOptions: [String] {
    headerValues("Connection").flatMap { $0.split(separator: ",") }.map {
      $0.trimmingHTTPWhitespace().lowercased()
    }
  }
}

/// Why a request head was refused, with what could be read of its request line for the log.
struct RequestRejection: Error {
  var status: Int
  var method = ""
  var target = ""
  var version = ""
}

enum RequestParser {
  /// Where the head ends (just past its empty line), searching from `start`; lines may end in CRLF
  /// or a bare LF, which RFC 9112 lets a server accept.
  static func endOfHead(in buffer: [UInt8], from start: Int) -> Int? {
    var index = max(start, 0)
    while index < buffer.count {
      if buffer[index] == UInt8(ascii: "\n") {
        if index + 1 < buffer.count && buffer[index + 1] == UInt8(ascii: "\n") {
          return index + 2
        }
        if index + 2 < buffer.count && buffer[index + 1] == UInt8(ascii: "\r")
          && buffer[index + 2] == UInt8(ascii: "\n")
        {
          return index + 3
        }
      }
      index += 1
    }
    return nil
  }

  /// Parses a head (request line, fields, empty line), leading empty lines already skipped.
  static func parse(_ head: ArraySlice<UInt8>) throws(RequestRejection) -> ParsedRequest {
    var lines: [ArraySlice<UInt8>] = head.split(
      separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false
    ).map { $0.last == UInt8(ascii: "\r") ? $0.dropLast() : $0 }
    while lines.last?.isEmpty == true { lines.removeLast() }
    guard let requestLine = lines.first else { throw RequestRejection(status: 400) }

    let parts = requestLine.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
    guard parts.count == 3 else { throw RequestRejection(status: 400) }
    let method = latin1(parts[0])
    let target = latin1(parts[1])
    let version = latin1(parts[2])
    var rejection = RequestRejection(status: 400, method: method, target: target, version: version)
    guard !parts[0].isEmpty, parts[0].allSatisfy(isTokenByte),
      !parts[1].isEmpty, parts[1].allSatisfy({ $0 > 0x20 && $0 != 0x7F })
    else { throw rejection }
    guard version == "HTTP/1.1" || version == "HTTP/1.0" else {
      if isWellFormedVersion(version) { rejection.status = 505 }
      throw rejection
    }

    var headers: [HTTPHeaderField] = []
    for line in lines.dropFirst() {
      // Obsolete line folding (a line starting with whitespace) is refused, as RFC 9112 allows.
      guard let first = line.first, first != 0x20, first != 0x09,
        let colon = line.firstIndex(of: UInt8(ascii: ":"))
      else { throw rejection }
      let name = line[line.startIndex..<colon]
      let value = line[(colon + 1)...]
      guard !name.isEmpty, name.allSatisfy(isTokenByte),
        value.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) })
      else { throw rejection }
      headers.append(
        HTTPHeaderField(name: latin1(name), value: latin1(value).trimmingHTTPWhitespace()))
    }

    guard let (path, query) = splitTarget(target) else { throw rejection }
    let request = ParsedRequest(
      method: method, target: target, path: path, query: query, version: version,
      headers: headers)
    if version == "HTTP/1.1" && request.headerValues("Host").count != 1 { throw rejection }
    return request
  }

  /// Path and query of an origin-form (`/p?q`) or absolute-form (`http://h/p?q`) target.
  static func splitTarget(_ target: String) -> (path: String, query: String?)? {
    var rest = Substring(target)
    if !rest.hasPrefix("/") {
      let lowered = rest.lowercased()
      guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://"),
        let schemeEnd = rest.range(of: "://")
      else { return nil }
      rest = rest[schemeEnd.upperBound...]
      guard let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) else {
        return ("/", nil)
      }
      rest = rest[slash...]
      if rest.hasPrefix("?") { rest = "/" + rest }
    }
    if let mark = rest.firstIndex(of: "?") {
      return (String(rest[..<mark]), String(rest[rest.index(after: mark)...]))
    }
    return (String(rest), nil)
  }

  /// RFC 9110's tchar.
  static func isTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"):
      return true
    default:
      return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
    }
  }

  private static func isWellFormedVersion(_ version: String) -> Bool {
    let bytes = Array(version.utf8)
    return bytes.count == 8 && version.hasPrefix("HTTP/") && bytes[6] == UInt8(ascii: ".")
      && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[5])
      && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[7])
  }

  /// Field values may carry obs-text (bytes above 0x7F); read as Latin-1 so no byte is lost.
  static func latin1<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
    String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
  }
}

extension StringProtocol {
  func trimmingHTTPWhitespace() -> String {
    var view = Substring(self)
    while let first = view.first, first == " " || first == "\t" { view.removeFirst() }
    while let last = view.last, last == " " || last == "\t" { view.removeLast() }
    return String(view)
  }
}

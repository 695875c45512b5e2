/// One header field as it was received, name in its original case.
public struct HTTPHeaderField: Sendable, Equatable {
  /// The field name as sent.
  public let name: String
  /// The value without surrounding whitespace.
  public let value: String

  /// A field.
  public init(name: String, value: String) {
    self.name = name
    self.value = value
  }
}

/// A request the server answered, with the status it sent.
public struct RecordedRequest: Sendable, Equatable {
  /// The method, e.g. `GET`; empty when the request line could not be read.
  public let method: String
  /// The request target as sent, e.g. `/file?x=1`.
  public let target: String
  /// The target's path, without query; what resources and faults are looked up by.
  public let path: String
  /// The query after `?`, if any.
  public let query: String?
  /// The protocol version, e.g. `HTTP/1.1`.
  public let version: String
  /// The header fields in the order received.
  public let headers: [HTTPHeaderField]
  /// The status code sent (for a fault that cuts the body short, the status of its head).
  public let status: Int
  /// The faults applied to this request.
  public let faults: [Fault]
  /// Which connection it came on, counting from 0 in order of acceptance.
  public let connection: Int
  /// Its position among the requests of that connection, from 0.
  public let indexOnConnection: Int

  /// The first value of the header `name`, compared case-insensitively.
  public func header(_ name: String) -> String? {
    headerValues(name).first
  }

  /// Every value of the header `name` in the order received, compared case-insensitively.
  public func headerValues(_ name: String) -> [String] {
    let wanted = name.lowercased()
    return headers.filter { $0.name.lowercased() == wanted }.map(\.value)
  }

  /// Whether the header `name` was sent at all, compared case-insensitively.
  public func hasHeader(_ name: String) -> Bool {
    !headerValues(name).isEmpty
  }
}

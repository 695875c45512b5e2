import PortableFoundation

/// The check that `URLRequestArchive(decoding:)`, which reads binary archives in place when it can,
/// gives exactly what the eager path (`init(archive: KeyedArchive(decoding:))`) gives. For the
/// differential tests and the fuzz harness.
@_spi(Differential)
public enum RequestDifferential {
  /// Where the two paths' outcomes differ, or nil when both fail with the same error, or both read
  /// the same typed fields, equal requests and archives, and the same encoding.
  /// Also checks that the summary the healthy-blob check reads (`inPlaceSummary`) says what
  /// reading the request through its slot table says (`summaryDifference`).
  public static func difference(_ data: Data, limits: KeyedArchiveLimits = .default) -> String? {
    if let difference = summaryDifference(data, limits: limits) { return difference }
    let fast = Result { try URLRequestArchive(decoding: data, limits: limits) }
    let eager = Result {
      try URLRequestArchive(archive: KeyedArchive(decoding: data, limits: limits))
    }
    return compare(
      fast, eager, sameError: { $0 as? KeyedArchiveError == $1 as? KeyedArchiveError },
      inPlace: \.isReadInPlace, typedDifference: typedDifference,
      same: { $0 == $1 && $0.archive == $1.archive }, encoded: { try $0.encoded() })
  }

  /// Where `URLRequestArchive.inPlaceSummary` (the five keys of the request object that tell)
  /// and `inPlaceSummaryThroughSlots` (through `InPlaceRequest`'s slot table) differ, or nil.
  public static func summaryDifference(_ data: Data, limits: KeyedArchiveLimits = .default)
    -> String?
  {
    data.withUnsafeBytes { bytes in
      let summary = URLRequestArchive.inPlaceSummary(of: bytes, limits: limits)
      let reference = URLRequestArchive.inPlaceSummaryThroughSlots(of: bytes, limits: limits)
      switch (summary, reference) {
      case (nil, nil): return nil
      case (let summary?, let reference?):
        if summary.methodIsSurelyGET != reference.methodIsSurelyGET {
          return "summary: method surely GET \(summary.methodIsSurelyGET), through slots not"
        }
        if summary.headerFieldsAreSurelySendable != reference.headerFieldsAreSurelySendable {
          return "summary: headers surely sendable \(summary.headerFieldsAreSurelySendable), "
            + "through slots not"
        }
        if summary.rootKeyIsRootObjectKey != (reference.rootKey == "NSKeyedArchiveRootObjectKey") {
          return "summary: root key is NSKeyedArchiveRootObjectKey "
            + "\(summary.rootKeyIsRootObjectKey), but the root key is \(reference.rootKey)"
        }
        return nil
      case (nil, _?): return "summary: none, but read through slots"
      case (_?, nil): return "summary read, but not through slots"
      }
    }
  }

  /// The comparison both differentials make: the same error, or values with the same typed
  /// fields (read first, before anything decodes the fast value's archive), equal, and encoding
  /// to the same bytes.
  public static func compare<Value>(
    _ fast: Result<Value, any Error>, _ eager: Result<Value, any Error>,
    sameError: (any Error, any Error) -> Bool, inPlace: (Value) -> Bool,
    typedDifference: (Value, Value) -> String?,
    same: (Value, Value) -> Bool, encoded: (Value) throws -> Data
  ) -> String? {
    switch (fast, eager) {
    case (.failure(let fastError), .failure(let eagerError)):
      return sameError(fastError, eagerError)
        ? nil : "errors differ: \(fastError) vs \(eagerError)"
    case (.success(let fast), .success(let eager)):
      let inPlace = inPlace(fast)
      if let field = typedDifference(fast, eager) {
        return "\(field) differs (in place: \(inPlace))"
      }
      if !same(fast, eager) { return "values or archives differ (in place: \(inPlace))" }
      if (try? encoded(fast)) != (try? encoded(eager)) {
        return "encodings differ (in place: \(inPlace))"
      }
      return nil
    case (.success(let value), .failure(let error)):
      return "fast path accepts (in place: \(inPlace(value))) what the eager path refuses: \(error)"
    case (.failure(let error), .success):
      return "fast path refuses what the eager path accepts: \(error)"
    }
  }

  /// The first typed field in which two requests differ, or nil.
  public static func typedDifference(_ lhs: URLRequestArchive, _ rhs: URLRequestArchive)
    -> String?
  {
    let fields: [(String, (URLRequestArchive) -> AnyHashable?)] = [
      ("className", { $0.className }), ("rootKey", { $0.rootKey }), ("layout", { $0.layout }),
      ("slotCount", { $0.slotCount }), ("url", { $0.url }),
      ("mainDocumentURL", { $0.mainDocumentURL }), ("httpMethod", { $0.httpMethod }),
      ("headerFields", { $0.headerFields.map { [$0.name, $0.value] } }),
      ("headerFieldsAreSendable", { $0.headerFieldsAreSendable }), ("body", { $0.body }),
      ("timeoutInterval", { $0.timeoutInterval?.bitPattern }), ("cachePolicy", { $0.cachePolicy }),
      ("httpShouldHandleCookies", { $0.httpShouldHandleCookies }),
      ("allowsCellularAccess", { $0.allowsCellularAccess }),
      ("networkServiceType", { $0.networkServiceType }), ("priority", { $0.priority }),
    ]
    return fields.first { $0.1(lhs) != $0.1(rhs) }?.0
  }
}

import Foundation

/// The check that `URLRequestArchive(decoding:)`, which reads binary archives in place when it can,
/// gives exactly what the eager path (`init(archive: KeyedArchive(decoding:))`) gives. For the
/// differential tests and the fuzz harness.
@_spi(Differential)
public enum RequestDifferential {
  /// Where the two paths' outcomes differ, or nil when both fail with the same error, or both read
  /// the same typed fields, equal requests and archives, and the same encoding.
  public static func difference(_ data: Data, limits: KeyedArchiveLimits = .default) -> String? {
    let fast = Result { try URLRequestArchive(decoding: data, limits: limits) }
    let eager = Result {
      try URLRequestArchive(archive: KeyedArchive(decoding: data, limits: limits))
    }
    switch (fast, eager) {
    case (.failure(let fastError), .failure(let eagerError)):
      return fastError as? KeyedArchiveError == eagerError as? KeyedArchiveError
        ? nil : "errors differ: \(fastError) vs \(eagerError)"
    case (.success(let fast), .success(let eager)):
      let inPlace = fast.isReadInPlace
      // Typed fields first, so that they are read before anything decodes the fast archive.
      if let field = typedDifference(fast, eager) {
        return "\(field) differs (in place: \(inPlace))"
      }
      if fast != eager || fast.archive != eager.archive {
        return "requests or archives differ (in place: \(inPlace))"
      }
      if (try? fast.encoded()) != (try? eager.encoded()) {
        return "encodings differ (in place: \(inPlace))"
      }
      return nil
    case (.success(let request), .failure(let error)):
      return
        "fast path accepts (in place: \(request.isReadInPlace)) what the eager path refuses: \(error)"
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
      ("headerFields", { $0.headerFields.map { [$0.name, $0.value] } }), ("body", { $0.body }),
      ("timeoutInterval", { $0.timeoutInterval?.bitPattern }), ("cachePolicy", { $0.cachePolicy }),
      ("httpShouldHandleCookies", { $0.httpShouldHandleCookies }),
      ("allowsCellularAccess", { $0.allowsCellularAccess }),
      ("networkServiceType", { $0.networkServiceType }), ("priority", { $0.priority }),
    ]
    return fields.first { $0.1(lhs) != $0.1(rhs) }?.0
  }
}

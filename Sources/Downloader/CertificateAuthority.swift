import Foundation

#if canImport(Security)
  import Security
#endif

/// A PEM file of certificate authorities (`DownloadConfiguration.certificateAuthority`): checked
/// before a download opens anything, and read into certificates where URLSession evaluates the
/// server's trust itself (Apple platforms). libcurl reads the file on its own.
enum CertificateAuthority {
  private static let begin = "-----BEGIN CERTIFICATE-----"
  private static let end = "-----END CERTIFICATE-----"

  /// The DER bytes of each certificate in a PEM text, in order.
  static func derCertificates(inPEM text: String) -> [Data] {
    var certificates = [Data]()
    var rest = text[...]
    while let start = rest.range(of: begin) {
      guard let stop = rest.range(of: end, range: start.upperBound..<rest.endIndex) else { break }
      let body = rest[start.upperBound..<stop.lowerBound].filter { !$0.isWhitespace }
      if let der = Data(base64Encoded: String(body)) { certificates.append(der) }
      rest = rest[stop.upperBound...]
    }
    return certificates
  }

  /// Checks that the file reads and holds at least one PEM certificate.
  ///
  /// - Throws: `DownloadError` with `.io` for a file that does not read, `.invalidCertificate`
  ///   for one without a certificate.
  static func check(_ url: URL) throws(DownloadError) {
    let text: String
    do {
      text = String(decoding: try Data(contentsOf: url), as: UTF8.self)
    } catch {
      throw DownloadError(
        .io, "cannot read the certificate authority \(url.path): \(error.localizedDescription)")
    }
    guard !derCertificates(inPEM: text).isEmpty else {
      throw DownloadError(
        .invalidCertificate,
        "\(url.path) holds no PEM certificate (\(begin) … \(end))")
    }
  }

  #if canImport(Security)
    /// The certificates in the file, for a server-trust evaluation (none when it does not read).
    static func certificates(in url: URL) -> [SecCertificate] {
      guard let data = try? Data(contentsOf: url) else { return [] }
      return derCertificates(inPEM: String(decoding: data, as: UTF8.self)).compactMap {
        SecCertificateCreateWithData(nil, $0 as CFData)
      }
    }
  #endif
}

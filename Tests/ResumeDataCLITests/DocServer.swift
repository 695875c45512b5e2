import Foundation
import TestHTTPServer

/// The server the pages' examples that need one talk to: they name it `http://127.0.0.1:8080`,
/// and each such example gets one of its own on a port the kernel chose, its port written as 8080
/// in what the example prints.
enum DocServer {
  /// The placeholder the pages use for the server's address.
  static let placeholder = "127.0.0.1:8080"

  /// The 32 KiB file the pages download; `Fixtures/partial/model.bin.part` is its first 12 KiB.
  static let model = Data((0..<32_768).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) })
  static let modelTag = "\"5f3a-8000\""
  static let modelDate = "Mon, 07 Dec 2026 10:00:00 GMT"

  /// A server holding the pages' resources:
  /// - `/files/model.bin`: the file, with a strong ETag and a Last-Modified date;
  /// - `/files/weak.bin`: the same with a weak ETag only;
  /// - `/files/gzip.bin`: the same, gzip-encoded (weak ETag, no ranges) for gzip clients;
  /// - `/files/plain.bin`: the same with no validator at all;
  /// - `/download/model.bin`: a 302 to a presigned URL of the file, good until 2099.
  static func start() throws -> TestHTTPServer {
    let server = try TestHTTPServer(configuration: .init(idleTimeout: .seconds(1)))
    server.serve(path: "/files/model.bin", body: model, etag: modelTag, lastModified: modelDate)
    server.serve(path: "/files/weak.bin", body: model, etag: "W/\"5f3a-8000\"")
    server.serve(path: "/files/gzip.bin", body: model, etag: modelTag, lastModified: modelDate)
    server.setFaults(path: "/files/gzip.bin", [.gzipForGzipClients])
    server.serve(path: "/files/plain.bin", body: model)
    server.setFaults(
      path: "/download/model.bin",
      [
        .redirect(
          to: "http://127.0.0.1:\(server.port)/files/model.bin?X-Amz-Algorithm=AWS4-HMAC-SHA256"
            + "&X-Amz-Date=20991231T000000Z&X-Amz-Expires=3600&X-Amz-Signature=5d41402a")
      ])
    return server
  }
}

// The floor under any downloader built on Foundation's URLSession on Linux: one data task whose
// delegate discards every chunk, on the serial OperationQueue URLSession is given. Whatever a
// downloader does with the bytes (write, digest, resume data) comes on top of this.
//
// Not part of the package (only the Downloader target imports FoundationNetworking);
// Benchmarks/download-bench.sh compiles it with `swiftc -O` and hands it to
// `resumedata-bench download --floor`.
//
// With an OUTPUT path it writes every chunk to that file as it arrives (one `write` each, no digest,
// no flush): the floor under a downloader that keeps the bytes, on a machine whose file writes
// cost what they cost.
//
// Usage: urlsession-floor URL [OUTPUT]   (prints the byte count; exit status 1 on a failure or
// non-200)

import Foundation
import FoundationNetworking

final class Discard: NSObject, URLSessionDataDelegate, @unchecked Sendable {
  // Touched only on the serial delegate queue, then read after `done` is signalled.
  var bytes = 0
  var status = 0
  var failure: Error?
  let done = DispatchSemaphore(value: 0)
  // The file the chunks are written to, or -1 to discard them.
  var output: Int32 = -1

  func urlSession(
    _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
  ) {
    status = (response as? HTTPURLResponse)?.statusCode ?? 0
    completionHandler(.allow)
  }

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    bytes += data.count
    guard output >= 0 else { return }
    data.withUnsafeBytes { chunk in
      var offset = 0
      while offset < chunk.count {
        let written = write(output, chunk.baseAddress! + offset, chunk.count - offset)
        if written < 0 {
          if errno == EINTR { continue }
          failure = POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
          return
        }
        offset += written
      }
    }
  }

  func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
    failure = error
    done.signal()
  }
}

guard (2...3).contains(CommandLine.arguments.count), let url = URL(string: CommandLine.arguments[1])
else {
  FileHandle.standardError.write(Data("usage: urlsession-floor URL [OUTPUT]\n".utf8))
  exit(64)
}
let delegate = Discard()
if CommandLine.arguments.count == 3 {
  delegate.output = open(CommandLine.arguments[2], O_WRONLY | O_CREAT | O_TRUNC, 0o644)
  guard delegate.output >= 0 else {
    FileHandle.standardError.write(Data("urlsession-floor: cannot open the output\n".utf8))
    exit(66)
  }
}
let queue = OperationQueue()
queue.maxConcurrentOperationCount = 1
let session = URLSession(configuration: .default, delegate: delegate, delegateQueue: queue)
var request = URLRequest(url: url)
// As the downloader asks: a compressing server would otherwise send other bytes.
request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
session.dataTask(with: request).resume()
delegate.done.wait()
if let failure = delegate.failure {
  FileHandle.standardError.write(Data("urlsession-floor: \(failure)\n".utf8))
  exit(1)
}
print(delegate.bytes)
exit(delegate.status == 200 ? 0 : 1)

import Foundation
import PropertyList
import ResumeData

/// libFuzzer's entry point: reads the input as a captured blob in every form (told from the
/// input, and each forced), and as a container of blobs. Checks: nothing crashes or throws
/// anything but `ResumeDataError` (and `PropertyListError` from a container's JSON); a form told
/// from the input is a text form only when its bytes start as a blob does, and raw only with the
/// input's own bytes; base64 and hex read back from their own canonical text to the same bytes;
/// a recovered description decodes as resume data of the generation it names; and every blob a
/// container lists reads as resume data.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
  let data = Data(bytes: start, count: count)
  func read(_ form: CapturedForm?) -> CapturedBlob? {
    do {
      return try CapturedBlob.read(data, as: form)
    } catch is ResumeDataError {
      return nil
    } catch {
      fatalError("CapturedBlob.read(as: \(String(describing: form))) threw \(error)")
    }
  }
  if let detected = read(nil) {
    switch detected.form {
    case .raw:
      guard detected.bytes == data else { fatalError("raw, but not the input's bytes") }
    case .base64, .hex:
      guard CapturedBlob.looksLikeBlob(detected.bytes) else {
        fatalError("\(detected.form) detected for bytes that start no blob")
      }
    case .description:
      break
    }
    if !detected.findings.isEmpty {
      guard let blob = try? ResumeData(decoding: detected.bytes) else {
        fatalError("a recovered description does not decode")
      }
      guard
        let message = detected.findings.first?.message,
        message.contains("written as a \(blob.generation.rawValue) blob")
      else { fatalError("the finding names another generation than the blob's") }
    }
  }
  if let base64 = read(.base64) {
    let again = try? CapturedBlob.read(
      Data(base64.bytes.base64EncodedString().utf8), as: .base64)
    guard again?.bytes == base64.bytes else { fatalError("base64 does not read back") }
  }
  if let hex = read(.hex) {
    let text = hex.bytes.map { String($0, radix: 16) }.map { $0.count == 1 ? "0" + $0 : $0 }
      .joined()
    let again = try? CapturedBlob.read(Data(text.utf8), as: .hex)
    guard again?.bytes == hex.bytes else { fatalError("hex does not read back") }
  }
  _ = read(.description)
  _ = read(.raw)
  do {
    if let container = try BlobContainer.scan(data) {
      for blob in container.blobs {
        if case .success(let captured) = blob.result {
          guard (try? ResumeData(decoding: captured.bytes)) != nil else {
            fatalError("a listed blob at \(blob.keyPath) does not read")
          }
        }
      }
    }
  } catch is PropertyListError {
  } catch {
    fatalError("BlobContainer.scan threw \(error)")
  }
  return 0
}

import Foundation

/// Reading inputs and writing outputs the way every subcommand does.
enum Files {
  /// Largest input read, so a mistaken argument (a disk image, /dev/zero) fails fast instead of
  /// exhausting memory. Resume data and plists are far smaller.
  static let maximumInputSize = 1 << 30

  /// Reads a named file, or standard input for `-`.
  static func read(_ path: String, streams: Streams) throws(CommandError) -> Data {
    if path == "-" {
      do {
        return try streams.readStandardInput()
      } catch {
        throw CommandError(
          .unreadableInput, "cannot read standard input: \(error.localizedDescription)", file: "-")
      }
    }
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
      throw CommandError(.unreadableInput, "no such file", file: path)
    }
    guard !isDirectory.boolValue else {
      throw CommandError(.unreadableInput, "is a directory", file: path)
    }
    let handle: FileHandle
    do {
      handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
    } catch {
      throw CommandError(.unreadableInput, "cannot open: \(reason(error))", file: path)
    }
    defer { try? handle.close() }
    do {
      let data = try handle.read(upToCount: maximumInputSize + 1) ?? Data()
      guard data.count <= maximumInputSize else {
        throw CommandError(
          .unreadableInput, "larger than the \(maximumInputSize)-byte input limit", file: path)
      }
      return data
    } catch let error as CommandError {
      throw error
    } catch {
      throw CommandError(.unreadableInput, "cannot read: \(reason(error))", file: path)
    }
  }

  /// Writes an output file atomically (a temporary file in the same directory, then a rename), so a
  /// failure never leaves a half-written file in place; `-` writes to standard output.
  static func write(_ data: Data, to path: String, streams: Streams) throws(CommandError) {
    if path == "-" {
      streams.writeStandardOutput(data)
      return
    }
    do {
      try data.write(to: URL(fileURLWithPath: path), options: .atomic)
    } catch {
      throw CommandError(.failure, "cannot write: \(reason(error))", file: path)
    }
  }

  private static func reason(_ error: Error) -> String {
    let nsError = error as NSError
    if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError,
      underlying.domain == NSPOSIXErrorDomain,
      let message = strerror(Int32(underlying.code))
    {
      return String(cString: message)
    }
    if nsError.domain == NSPOSIXErrorDomain, let message = strerror(Int32(nsError.code)) {
      return String(cString: message)
    }
    return nsError.localizedDescription
  }
}

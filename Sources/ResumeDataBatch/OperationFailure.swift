import PropertyList
import ResumeData

/// An error of decoding, changing or encoding a blob, sorted the way `batch` reports it in a result
/// and the command-line tool by its exit status: an edit's invalid argument is a usage error, an
/// operation the blob or target does not allow a failure, anything else malformed input.
package struct OperationFailure: Sendable, Equatable {
  /// Which of the three it is.
  package enum Kind: Sendable, Equatable {
    /// An invalid argument of an edit.
    case usage
    /// Something the blob or the target does not allow, or a value that cannot be encoded.
    case failure
    /// The blob is not well formed.
    case malformed
  }

  /// Which kind of failure.
  package var kind: Kind
  /// What went wrong, a key path first when the error has one.
  package var message: String
  /// Where in the blob's container, when known.
  package var location: PropertyListLocation

  /// Sorts `error`, thrown by decoding, changing or encoding resume data.
  package init(_ error: any Error) {
    location = .none
    guard let error = error as? ResumeDataError else {
      kind = .failure
      message = "\(error)"
      return
    }
    let atKeyPath = error.keyPath.isEmpty ? error.message : "\(error.keyPath): \(error.message)"
    switch error.code {
    case .invalidEdit:
      kind = .usage
      message = error.message
    case .unsupported:
      kind = .failure
      message = atKeyPath
    default:
      if let plist = error.propertyListError {
        kind = plist.code == .unencodable ? .failure : .malformed
        message = plist.message
        location = plist.location
      } else {
        kind = .malformed
        message = atKeyPath
      }
    }
  }
}

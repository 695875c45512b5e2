import PropertyList

/// Every target — a blob in a form the target cannot read. iOS 10 reads plain v1/v2 dictionaries,
/// iOS 11 also v4, iOS 12 and later also keyed archives (iOS 12 wrote info version 4 and is not
/// known to accept 5), Network.framework only its own masked object; each fails a foreign form
/// with −3003 or "Invalid resume data". The rule converts the blob to the first form the target
/// reads (v2, v4, keyed with the target's info version, or Network.framework's), keeping
/// everything that form can carry and reporting the rest.
public struct ConvertForTarget: RepairRule {
  /// Creates the rule.
  public init() {}

  /// `convert-for-target`.
  public var name: String { "convert-for-target" }

  /// Every target.
  public func isNeeded(for target: RepairTarget) -> Bool { true }

  /// Converts when the target reads neither the blob's generation nor (for keyed blobs on iOS 12)
  /// its info version.
  public func apply(to blob: inout ResumeData, _ context: RepairContext) throws -> [Finding] {
    let target = context.target
    var destination: ResumeDataGeneration?
    if !target.readable.contains(blob.generation) {
      destination = target.readable.first
    } else if blob.generation == .keyed, let version = target.keyedInfoVersion,
      version < blob.infoVersion ?? 0
    {
      destination = .keyed
    }
    guard let destination else { return [] }
    let plain: [ResumeDataGeneration] = [.v1, .v2, .v4]
    let was = blob.generation
    var conversionFindings: [Finding] = []
    // Taken apart as it comes: bound to a name, the converted blob would be copied into `blob`.
    if case (let converted, let findings)? = try blob.convertedQuietly(
      to: destination, format: plain.contains(destination) ? .xml : nil,
      infoVersion: target.keyedInfoVersion, temporaryDirectory: context.temporaryDirectory)
    {
      blob = converted
      conversionFindings = findings
    }
    var parts = [
      target.rawValue, " cannot read a ", was.rawValue, " blob: converted to ",
      blob.generation.rawValue,
    ]
    if let version = blob.infoVersion { parts += [" (info version ", String(version), ")"] }
    return [Finding(name, .info, Finding.message(parts))] + conversionFindings
  }
}

/// Bounds on what a reader accepts, each guarding against one kind of hostile input.
///
/// The defaults accept every property list Apple's own frameworks produce and read; tighten them for
/// untrusted input in constrained processes.
public struct PropertyListLimits: Sendable, Hashable {
  /// Deepest nesting of arrays and dictionaries. Guards the stack against deeply nested input.
  /// Default 512, the depth CoreFoundation's readers accept.
  public var maximumDepth: Int
  /// Most objects a binary plist may declare, or an XML plist may contain. Guards memory against
  /// inputs that declare or repeat huge numbers of small objects. Default 16,777,216.
  public var maximumObjectCount: Int
  /// Largest input accepted, in bytes. Default 1 GiB.
  public var maximumInputSize: Int
  /// Longest string or data value, in bytes (UTF-16 strings count two bytes a unit). Default 256 MiB.
  public var maximumValueLength: Int
  /// Most values a binary plist may stand for once every shared reference is expanded (a value
  /// referenced twice counts twice, with everything inside it). Guards time and memory of everything
  /// that walks the result against plists whose objects reference each other exponentially (a
  /// "billion laughs" through references). Default 16,777,216.
  public var maximumVisitedElements: Int

  /// Creates limits; every argument defaults to the documented default.
  public init(
    maximumDepth: Int = 512,
    maximumObjectCount: Int = 1 << 24,
    maximumInputSize: Int = 1 << 30,
    maximumValueLength: Int = 1 << 28,
    maximumVisitedElements: Int = 1 << 24
  ) {
    self.maximumDepth = maximumDepth
    self.maximumObjectCount = maximumObjectCount
    self.maximumInputSize = maximumInputSize
    self.maximumValueLength = maximumValueLength
    self.maximumVisitedElements = maximumVisitedElements
  }

  /// The defaults.
  public static let `default` = PropertyListLimits()
}

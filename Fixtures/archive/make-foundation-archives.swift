// Writes the Foundation-made keyed archives in Fixtures/archive/foundation/ with Linux Foundation's
// NSKeyedArchiver (swift-corelibs-foundation). Run from the repository root:
//   swiftc -O Fixtures/archive/make-foundation-archives.swift -o /tmp/make-archives && /tmp/make-archives
//
// These document what Linux Foundation writes, which is not always what Apple's Foundation writes:
// the root key is `root`, equal objects are stored once (Apple shares only identical objects), and
// NSMutableString is archived as a plain string.
import Foundation

// NSDictionary and NSSet on Linux are backed by Swift's hashed collections, whose order depends on a
// per-process random seed. Re-run this program with deterministic hashing so that running it again
// writes the same bytes.
if ProcessInfo.processInfo.environment["SWIFT_DETERMINISTIC_HASHING"] == nil {
  let child = Process()
  child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
  child.arguments = Array(CommandLine.arguments.dropFirst())
  child.environment = ProcessInfo.processInfo.environment.merging(
    ["SWIFT_DETERMINISTIC_HASHING": "1"]) { $1 }
  try child.run()
  child.waitUntilExit()
  exit(child.terminationStatus)
}

let folder = URL(fileURLWithPath: "Fixtures/archive/foundation")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)

/// Archives `root` as NSKeyedArchiver's instance API does, in binary or XML.
func archive(_ root: Any, xml: Bool) -> Data {
  let archiver = NSKeyedArchiver(requiringSecureCoding: false)
  if xml { archiver.outputFormat = .xml }
  archiver.encode(root, forKey: NSKeyedArchiveRootObjectKey)
  archiver.finishEncoding()
  return archiver.encodedData
}

/// Writes `<name>.archive` (with the class method) and, when asked, `<name>.xml.archive`.
func write(_ name: String, _ root: Any, xml: Bool = false) throws {
  let binary = try NSKeyedArchiver.archivedData(withRootObject: root, requiringSecureCoding: false)
  precondition(binary == archive(root, xml: false), "\(name): the two binary APIs differ")
  try binary.write(to: folder.appendingPathComponent("\(name).archive"))
  if xml {
    try archive(root, xml: true).write(to: folder.appendingPathComponent("\(name).xml.archive"))
  }
}

// Every value kind a resume-data-like dictionary holds. Numbers and dates are exactly representable,
// so the tests can name them exactly.
let mixed = NSDictionary(dictionary: [
  "string": NSString(string: "plain ASCII"),
  "unicode": NSString(string: "Grüße, 日本語, 🙂"),
  "integer": NSNumber(value: 42),
  "negative": NSNumber(value: -7),
  "large": NSNumber(value: 5_000_000_000 as Int64),
  "double": NSNumber(value: 3.25),
  "true": NSNumber(value: true),
  "false": NSNumber(value: false),
  "date": NSDate(timeIntervalSinceReferenceDate: 700_000_000.5),
  "data": NSData(data: Data([0x00, 0x01, 0xfe, 0xff])),
  "array": NSArray(array: [NSString(string: "one"), NSNumber(value: 2)]),
  "dictionary": NSDictionary(dictionary: ["nested": NSString(string: "value")]),
])
try write("mixed-dictionary", mixed, xml: true)

// One array instance and one string instance, each referenced twice, plus an array and a string that
// are equal to them but distinct objects.
let shared = NSArray(array: [NSString(string: "leaf")])
let sharedString = NSString(string: "shared")
let equalString = NSMutableString(string: "shared").copy() as! NSString
try write(
  "shared-objects",
  NSArray(array: [
    shared, shared, sharedString, sharedString, equalString,
    NSArray(array: [NSString(string: "leaf")]),
  ]))

try write("string-root", NSString(string: "Grüße 🙂"))
try write("number-root", NSNumber(value: 1_234_567))
let base = URL(string: "https://example.com/files/")!
try write("url-relative", NSURL(string: "archive.zip?part=2", relativeTo: base)!, xml: true)
try write("url-absolute", NSURL(string: "https://example.com/a%20b/c.txt#frag")!)
try write("date", NSDate(timeIntervalSinceReferenceDate: -123_456_789.25))
try write("data", NSData(data: Data((0..<32).map { UInt8($0 * 8) })))
try write(
  "null-in-array", NSArray(array: [NSString(string: "before"), NSNull(), NSNumber(value: 1)]))
try write("set", NSSet(array: [NSString(string: "a"), NSString(string: "b"), NSNumber(value: 3)]))
try write("uuid", NSUUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!)
try write("mutable-string", NSMutableString(string: "mutable"))
try write("mutable-array", NSMutableArray(array: [NSString(string: "x"), NSNumber(value: 1)]))
try write(
  "mutable-dictionary",
  NSMutableDictionary(dictionary: ["key": NSMutableArray(array: [NSString(string: "v")])]))
try write("mutable-set", NSMutableSet(array: [NSString(string: "only")]))
try write("mutable-data", NSMutableData(data: Data([0xca, 0xfe])))

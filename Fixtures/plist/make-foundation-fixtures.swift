// Writes the Foundation-made fixtures in this folder with Foundation's PropertyListSerialization
// (CoreFoundation's codec on Linux). Run from the repository root:
//   swiftc -O Fixtures/plist/make-foundation-fixtures.swift -o /tmp/make-fixtures && /tmp/make-fixtures
import Foundation

let folder = URL(fileURLWithPath: "Fixtures/plist")

// Every type Foundation can write, with values chosen to exercise each encoding's corners:
// 1-, 2-, 4-, 8- and 16-byte integers, negative numbers, 32- and 64-bit reals, a date before 2001,
// data long enough for several base64 lines, non-ASCII strings (UTF-16 in binary), XML escapes.
let types: [String: Any] = [
  "string": "plain ASCII",
  "unicode": "Grüße, 日本語, 🙂",
  "escapes": "<tag> & \"quotes\" 'apostrophes'",
  "empty string": "",
  "int8": 200,
  "int16": 40_000,
  "int32": 3_000_000_000,
  "int64": 9_000_000_000_000,
  "negative": -42,
  "uint64 max": UInt64.max,
  "double": 3.141592653589793,
  "float": Float(0.5),
  "date": Date(timeIntervalSinceReferenceDate: -123_456_789),
  "data": Data((0..<200).map { UInt8($0) }),
  "empty data": Data(),
  "true": true,
  "false": false,
  "array": ["one", 2, ["nested": Data([0xde, 0xad, 0xbe, 0xef])]] as [Any],
  "empty array": [Any](),
  "empty dict": [String: Any](),
]

// A resume-data-shaped dictionary (keys of ../shared/docs/resume-data-format.md §2) with made-up values.
let resumeLike: [String: Any] = [
  "NSURLSessionDownloadURL": "https://example.com/files/archive.zip",
  "NSURLSessionResumeBytesReceived": 1_048_576,
  "NSURLSessionResumeEntityTag": "\"5534b35d-7c7be1\"",
  "NSURLSessionResumeServerDownloadDate": "Mon, 20 Apr 2015 08:05:49 GMT",
  "NSURLSessionResumeInfoTempFileName": "CFNetworkDownload_q1w2e3.tmp",
  "NSURLSessionResumeInfoVersion": 2,
  "NSURLSessionResumeCurrentRequest": Data((0..<300).map { UInt8(truncatingIfNeeded: $0 &* 7) }),
  "NSURLSessionResumeOriginalRequest": Data((0..<300).map { UInt8(truncatingIfNeeded: $0 &* 13) }),
]

for (name, value) in [("foundation-types", types), ("resume-shaped", resumeLike)] as [(String, Any)] {
  for (format, suffix) in [(PropertyListSerialization.PropertyListFormat.xml, "xml.plist"), (.binary, "binary.plist")] {
    let data = try PropertyListSerialization.data(fromPropertyList: value, format: format, options: 0)
    try data.write(to: folder.appendingPathComponent("\(name).\(suffix)"))
  }
}

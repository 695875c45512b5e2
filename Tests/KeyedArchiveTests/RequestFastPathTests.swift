import Foundation
@_spi(Differential) import KeyedArchive
import PropertyList
import TestSupport
import Testing

/// A request archive with one change made to its archive, and whether the change keeps it on the
/// fast path.
struct RequestVariant: Sendable, CustomTestStringConvertible {
  let name: String
  let bytes: @Sendable () throws -> Data
  var testDescription: String { name }
}

/// The objects and envelope of a request archive, for variants that change them.
func editedRequest(
  _ file: String = "request/post-body-headers.archive",
  _ edit: (inout [PropertyListValue]) -> Void
) throws -> Data {
  let archive = try KeyedArchive(decoding: fixture("archive/" + file))
  guard case .dictionary(var envelope) = archive.propertyList,
    case .array(var objects)? = envelope["$objects"]
  else { throw KeyedArchiveError(.envelope, "not an archive", at: "") }
  edit(&objects)
  envelope["$objects"] = .array(objects)
  return try PropertyListValue.dictionary(envelope).encoded(as: .binary)
}

/// A request archive with its request object's fields changed.
func editedRequestRoot(_ edit: (inout PropertyListDictionary) -> Void) throws -> Data {
  try editedRequest { objects in
    let root = objectIndex(objects) { isInstance($0, of: "NSMutableURLRequest", in: objects) }
    guard case .dictionary(var fields) = objects[root] else { return }
    edit(&fields)
    objects[root] = .dictionary(fields)
  }
}

/// A request archive whose URL's slot (1) is under `key` instead of its own.
func urlSlotRenamed(_ key: String) throws -> Data {
  try editedRequestRoot { fields in
    fields[key] = fields["__nsurlrequest_proto_prop_obj_1"]
    fields["__nsurlrequest_proto_prop_obj_1"] = nil
  }
}

/// The index of the first object a predicate holds for.
func objectIndex(_ objects: [PropertyListValue], _ matches: (PropertyListValue) -> Bool) -> Int {
  objects.firstIndex(where: matches) ?? 0
}

func isInstance(_ value: PropertyListValue, of className: String, in objects: [PropertyListValue])
  -> Bool
{
  guard case .uid(let uid)? = value["$class"], Int(uid) < objects.count else { return false }
  return objects[Int(uid)]["$classname"]?.stringValue == className
}

let requestVariants: [RequestVariant] = [
  RequestVariant(name: "URL with a base URL") {
    try editedRequest { objects in
      let url = objectIndex(objects) { isInstance($0, of: "NSURL", in: objects) }
      let base = objects.count
      guard case .dictionary(var baseURL) = objects[url] else { return }
      baseURL["NS.relative"] = .string("https://base.example/")
      objects.append(.dictionary(baseURL))
      guard case .dictionary(var fields) = objects[url] else { return }
      fields["NS.base"] = .uid(UInt64(base))
      fields["NS.relative"] = .string("relative/path")
      objects[url] = .dictionary(fields)
    }
  },
  RequestVariant(name: "method as an NSMutableString instance") {
    try editedRequest { objects in
      let method = objectIndex(objects) { $0 == .string("POST") }
      let classObject = objects.count
      objects.append(
        .dictionary([
          "$classname": .string("NSMutableString"),
          "$classes": .array([.string("NSMutableString"), .string("NSString")]),
        ]))
      objects[method] = .dictionary([
        "NS.string": .string("PUT"), "$class": .uid(UInt64(classObject)),
      ])
    }
  },
  RequestVariant(name: "body as an NSData instance") {
    try editedRequest { objects in
      let body = objectIndex(objects) { $0.dataValue != nil }
      let classObject = objects.count
      objects.append(.dictionary(["$classname": .string("NSData")]))
      objects[body] = .dictionary([
        "NS.data": .data(Data("inline".utf8)), "$class": .uid(UInt64(classObject)),
      ])
    }
  },
  RequestVariant(name: "a header value that is a number") {
    try editedRequest { objects in
      let value = objectIndex(objects) { $0 == .string("7f3e") }
      objects[value] = .integer(PropertyListInteger(7))
    }
  },
  RequestVariant(name: "object 0 is not $null") {
    try editedRequest { objects in objects[0] = .string("nothing") }
  },
  RequestVariant(name: "a non-ASCII key") {
    try editedRequestRoot { fields in
      fields["clé"] = .integer(PropertyListInteger(1))
    }
  },
  RequestVariant(name: "$2 above Int64.max") {
    try editedRequestRoot { fields in
      fields["$2"] = .integer(PropertyListInteger(UInt64.max))
    }
  },
  RequestVariant(name: "timeout as an integer") {
    try editedRequest { objects in
      let timeout = objectIndex(objects) { $0 == .real(PropertyListReal(30.0)) }
      objects[timeout] = .integer(PropertyListInteger(45))
    }
  },
  RequestVariant(name: "a dictionary key twice") {
    // Only the binary object table can say a key twice: the reader keeps the last value.
    var table = try BinaryPropertyListObjectTable(
      reading: fixture("archive/request/post-body-headers.archive"))
    for (index, object) in table.objects.enumerated() {
      guard case .dictionary(let keys, let values) = object, keys.count > 8 else { continue }
      table.objects[index] = .dictionary(keys: keys + [keys[2]], values: values + [values[0]])
      break
    }
    return table.encoded()
  },
  RequestVariant(name: "a UID out of range beside $objects, which no check covers") {
    let archive = try KeyedArchive(decoding: fixture("archive/request/get-22-slots.archive"))
    guard case .dictionary(var envelope) = archive.propertyList else { return Data() }
    envelope["extra"] = .uid(9_999)
    return try PropertyListValue.dictionary(envelope).encoded(as: .binary)
  },
  RequestVariant(name: "a root of 70 fields") {
    try editedRequestRoot { fields in
      for index in 0..<50 { fields["extra\(index)"] = .integer(PropertyListInteger(index)) }
    }
  },
]

/// Requests whose keys are spelled like slot keys, or nearly: what the fast path tells apart by a
/// key's first byte, its length and a standard slot's prefix, reading each request in place.
let slotKeyVariants: [RequestVariant] = [
  RequestVariant(name: "a slot key with a leading zero") {
    try urlSlotRenamed("__nsurlrequest_proto_prop_obj_01")
  },
  RequestVariant(name: "slot keys of six and seven digits") {
    try editedRequestRoot { fields in
      fields["__nsurlrequest_proto_prop_obj_999999"] = fields["__nsurlrequest_proto_prop_obj_1"]
      fields["__nsurlrequest_proto_prop_obj_1000000"] = fields["__nsurlrequest_proto_prop_obj_1"]
    }
  },
  RequestVariant(name: "a key of a slot key's length with another prefix") {
    try urlSlotRenamed("__nsurlrequest_proto_prop_OBJ_1")
  },
  RequestVariant(name: "slot 0 holding a number") {
    try editedRequestRoot { fields in
      fields["__nsurlrequest_proto_prop_obj_0"] = .integer(PropertyListInteger(1))
    }
  },
  RequestVariant(name: "$N keys beside the standard slots") {
    try editedRequestRoot { fields in
      fields["$4"] = fields["__nsurlrequest_proto_prop_obj_1"]
      fields["$05"] = fields["__nsurlrequest_proto_prop_obj_1"]
      fields["$"] = fields["__nsurlrequest_proto_prop_obj_1"]
    }
  },
  RequestVariant(name: "the standard layout's slot 0 gone, slots in $N keys") {
    try editedRequestRoot { fields in
      for slot in 0..<22 {
        fields["$\(slot + 3)"] = fields["__nsurlrequest_proto_prop_obj_\(slot)"]
        fields["__nsurlrequest_proto_prop_obj_\(slot)"] = nil
      }
    }
  },
]

/// Requests holding one header field each that can or cannot be sent: ASCII and UTF-16 names and
/// values, line breaks and NUL at each end and inside, values of a vector step and longer.
let headerFieldVariants: [(String, String)] = [
  ("X-Fine", "plain value"), ("X-Fine", String(repeating: "v", count: 40)), ("X Space", "v"),
  ("X:Colon", "v"), ("", "v"), ("Ünï", "v"), ("X-UTF16", "välue"), ("X-Inject", "a\r\nEvil: b"),
  ("X-End", String(repeating: "v", count: 31) + "\n"),
  ("X-Start", "\r" + String(repeating: "v", count: 20)),
  ("X-Nul", "a\u{0}b"), ("X-UTF16-Break", "ä\nb"), ("X-Tab", "a\tb"),
  ("!#$%&'*+-.^_`|~09AZaz", "v"),
]

@Suite("Request fast path")
struct RequestFastPathTests {
  @Test(
    "Every fixture reads the same on both paths",
    arguments: blobAndArchiveFixtures())
  func fixtures(_ file: String) throws {
    let data = try fixture(file)
    #expect(RequestDifferential.difference(data) == nil)
  }

  @Test("Request fixtures are read in place", arguments: fixturesRecursively("archive/request"))
  func readInPlace(_ file: String) throws {
    let request = try URLRequestArchive(decoding: fixture(file))
    #expect(request.isReadInPlace)
    _ = request.archive
    #expect(!request.isReadInPlace)
  }

  @Test("Every truncation of a request archive reads the same on both paths")
  func truncations() throws {
    let data = try fixture("archive/request/post-body-headers.archive")
    for length in 0..<data.count {
      let difference = RequestDifferential.difference(data.prefix(length))
      #expect(difference == nil, "truncated to \(length) bytes")
    }
  }

  @Test("Every byte flipped in a request archive reads the same on both paths")
  func mutations() throws {
    let data = try fixture("archive/request/post-body-headers.archive")
    for position in data.indices {
      for change: UInt8 in [0x01, 0x80, 0xFF] {
        var mutated = data
        mutated[position] ^= change
        let difference = RequestDifferential.difference(mutated)
        #expect(difference == nil, "byte \(position) ^ \(change)")
      }
    }
  }

  @Test(
    "Whether header fields can be sent reads the same on both paths",
    arguments: headerFieldVariants)
  func headerFields(name: String, value: String) throws {
    var fields = URLRequestFields(url: "https://example.com/file")
    fields.headerFields = [.init("Accept", "*/*"), .init(name, value)]
    let data = try URLRequestArchive(fields).encoded()
    #expect(RequestDifferential.difference(data) == nil)
    let request = try URLRequestArchive(decoding: data)
    #expect(request.isReadInPlace)
    #expect(
      request.headerFieldsAreSendable
        == (URLRequestFields.Header(name, value).problem == nil))
  }

  @Test(
    "The one-pass summary tells a GET from any other method as reading the slots does",
    arguments: [
      ("GET", true), ("get", true), ("gEt", true), ("POST", false), ("GETS", false),
      ("GE", false), ("ĝet", false), ("G\u{0}T", false), ("", false),
    ])
  func summaryMethod(_ method: String, isGET: Bool) throws {
    var fields = URLRequestFields(url: "https://example.com/file")
    fields.httpMethod = method
    let data = try URLRequestArchive(fields).encoded()
    #expect(RequestDifferential.summaryDifference(data) == nil)
    let summary = data.withUnsafeBytes {
      URLRequestArchive.inPlaceSummary(of: $0, limits: .default)
    }
    #expect(summary?.methodIsSurelyGET == isGET)
    #expect(summary?.headerFieldsAreSurelySendable == true)
  }

  @Test("Keys spelled like slot keys read the same on both paths", arguments: slotKeyVariants)
  func slotKeys(_ variant: RequestVariant) throws {
    let data = try variant.bytes()
    #expect(RequestDifferential.difference(data) == nil)
    #expect(try URLRequestArchive(decoding: data).isReadInPlace)
  }

  @Test("Unusual shapes read the same on both paths", arguments: requestVariants)
  func variants(_ variant: RequestVariant) throws {
    #expect(RequestDifferential.difference(try variant.bytes()) == nil)
  }
}

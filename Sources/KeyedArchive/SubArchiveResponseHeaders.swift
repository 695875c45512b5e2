import PortableFoundation
@_spi(InPlace) @_spi(Differential) @_spi(Writing) import PropertyList

// The sub-archive writer's reading of a response's header fields in place (see
// SubArchiveWriter.swift): for an object the writer writes, the values that decoding the archive
// it writes as a `URLResponseArchive` would give, without writing or decoding it.
//
// Its tree twin: `URLResponseArchive(decoding: archivedAsRoot(uid)).headerFields`. Held equal by
// `ResumeDifferential.writerDifference` in Tests/ResumeDataTests/SubArchiveTests.swift ("A
// response's validators read with the parts in place, as its decoded header fields") and by the
// fuzz harness Fuzz/Sources/FuzzResumeData/main.swift.

extension KeyedArchiveView {
  /// For an object that `archivedAsRoot` writes, the value of each header field named in `names`
  /// in `URLResponseArchive(decoding: archivedAsRoot(uid)).headerFields` (the first whose name
  /// equals it but for ASCII case, as `HTTPFieldName.equal` compares), read in place: nil for each
  /// when the object is not a response or has no header field. Nil when the object is of a shape
  /// this does not follow (the caller then decodes the archive).
  package func responseHeaderValues(ofWritten uid: UInt64, _ names: [String]) -> [String?]? {
    guard uid != 0, uid < UInt64(count) else { return nil }
    // What is not a response (`URLResponseArchive` refuses it) has no header fields.
    var values = [String?](repeating: nil, count: names.count)
    guard let responseClass = classUID(ofInstance: object(uid)) else {
      // A string, number or data; a dictionary without a class is not written.
      return table.isKind(object(uid), .dictionary) ? nil : values
    }
    switch category(ofClass: responseClass) {
    case .plain: break
    case .array, .mutableArray, .dictionary, .mutableDictionary, .string, .url: return values
    case .refused, .unwritable: return nil
    }
    guard classChainContains(responseClass, "NSURLResponse") else { return values }
    let response = object(uid)
    let (fieldCount, start) = table.contents(response)
    for position in 0..<fieldCount {
      // Keys are ASCII in what `archivedAsRoot` writes.
      guard let key = table.asciiBytes(table.reference(start, position)) else { return nil }
      guard Self.containsHeader(key), Text(key) != Constant.classKey.text else { continue }
      // The first field so named that holds a reference to a dictionary.
      let value = table.reference(start, fieldCount + position)
      guard table.isKind(value, .uid), table.uid(value) != 0 else { continue }
      guard table.uid(value) < UInt64(count) else { return nil }
      let dictionary = object(table.uid(value))
      guard let dictionaryClass = classUID(ofInstance: dictionary) else {
        // A string, number or data; a dictionary without a class is not written.
        if table.isKind(dictionary, .dictionary) { return nil }
        continue
      }
      switch category(ofClass: dictionaryClass) {
      case .dictionary, .mutableDictionary: break
      case .array, .mutableArray, .string, .url, .plain: continue
      case .refused, .unwritable: return nil
      }
      guard let keys = table.value(dictionary, forKey: "NS.keys"),
        let objects = table.value(dictionary, forKey: "NS.objects"),
        table.isKind(keys, .array), table.isKind(objects, .array),
        table.count(keys) == table.count(objects)
      else { return nil }
      for entry in 0..<table.count(keys) {
        // Entries whose name or value is not a string are not header fields.
        let name = headerString(table.element(keys, entry))
        let text = headerString(table.element(objects, entry))
        guard case .string(let name) = name, case .string(let text) = text else {
          if name == .unknown || text == .unknown { return nil }
          continue
        }
        for (index, wanted) in names.enumerated()
        where values[index] == nil && HTTPFieldName.equal(name, wanted) {
          values[index] = text
        }
      }
      return values
    }
    return values
  }

  /// What a reference to a header field's name or value decodes to.
  private enum HeaderString: Equatable {
    case string(String)
    case notString
    /// Something `archivedAsRoot` does not write.
    case unknown
  }

  private func headerString(_ reference: Int) -> HeaderString {
    guard table.isKind(reference, .uid) else { return .unknown }
    let uid = table.uid(reference)
    // UID 0 is nil.
    guard uid != 0 else { return .notString }
    guard uid < UInt64(count) else { return .unknown }
    let object = object(uid)
    if table.isKind(object, .string) { return .string(table.string(object)) }
    guard let objectClass = classUID(ofInstance: object) else {
      // A number or data; a dictionary without a class is not written.
      return table.isKind(object, .dictionary) ? .unknown : .notString
    }
    switch category(ofClass: objectClass) {
    case .string:
      return referencedOrInlineString(object, "NS.string").map { .string($0) } ?? .unknown
    case .array, .mutableArray, .dictionary, .mutableDictionary, .url, .plain: return .notString
    case .refused, .unwritable: return .unknown
    }
  }

  /// What the writer makes of a checked class object.
  private func category(ofClass classUID: UInt64) -> ClassCategory {
    ViewReader.category(ViewReader.mostDerivedName(of: object(classUID), table), table)
  }

  /// Whether an ASCII key contains `header` in any case (`lowercased().contains("header")`).
  private static func containsHeader(_ key: UnsafeRawBufferPointer) -> Bool {
    let header: StaticString = "header"
    let length = header.utf8CodeUnitCount
    guard key.count >= length else { return false }
    for start in 0...(key.count - length) {
      var matches = true
      // ASCII letters lowercased; nothing else ORed with 0x20 gives a letter of `header`.
      for offset in 0..<length where key[start + offset] | 0x20 != header.utf8Start[offset] {
        matches = false
        break
      }
      if matches { return true }
    }
    return false
  }
}

import CVectorLoops

// The scans in C (CVectorLoops' byte_scans.c) have no twin in Swift: each is held to the rule it
// states, byte by byte, by Tests/PropertyListTests/ByteScanTests.swift; no fuzz harness compares
// them.

/// Whether bytes hold a line feed, a carriage return or NUL (what ends an HTTP header field
/// early), sixteen bytes a step (CVectorLoops): header values are checked on every blob diagnosed.
package func holdsLineBreakOrNul(_ text: UnsafeRawBufferPointer) -> Bool {
  cvl_holds_line_break_or_nul(text.baseAddress?.assumingMemoryBound(to: UInt8.self), text.count)
    != 0
}

/// Whether bytes are an HTTP token (RFC 9110 §5.6.2): one or more of ``!#$%&'*+-.^_`|~``, digits
/// and ASCII letters.
package func isHTTPToken(_ text: UnsafeRawBufferPointer) -> Bool {
  cvl_is_http_token(text.baseAddress?.assumingMemoryBound(to: UInt8.self), text.count) != 0
}

/// Whether a header field can be sent as it is: `isHTTPToken(name)` and not
/// `holdsLineBreakOrNul(value)`, in one call (a diagnosis checks every field of two requests).
package func isSendableHeaderField(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)
  -> Bool
{
  cvl_is_sendable_header_field(
    name.baseAddress?.assumingMemoryBound(to: UInt8.self), name.count,
    value.baseAddress?.assumingMemoryBound(to: UInt8.self), value.count) != 0
}

// The only interface between Swift and libxml2.
//
// Swift must not import libxml2's headers (on Debian they clash with Foundation's ICU module), so this
// header exposes plain C types only: a table of callbacks, the element tags of Apple's property-list
// vocabulary, and one parse function. Everything that touches libxml2 lives in shim.c.

#ifndef CXMLSHIM_H
#define CXMLSHIM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The element names of Apple's property-list vocabulary, classified once in C so that Swift never
/// compares strings per element.
typedef enum __attribute__((enum_extensibility(closed))) CXMLShimTag {
  /// Any other element (including any element with a namespace prefix).
  CXMLShimTagUnknown = 0,
  CXMLShimTagPlist,
  CXMLShimTagDict,
  CXMLShimTagArray,
  CXMLShimTagKey,
  CXMLShimTagString,
  CXMLShimTagData,
  CXMLShimTagDate,
  CXMLShimTagInteger,
  CXMLShimTagReal,
  CXMLShimTagTrue,
  CXMLShimTagFalse,
} CXMLShimTag;

/// What kind of problem the shim reports through `CXMLShimHandlers.error`.
typedef enum __attribute__((enum_extensibility(closed))) CXMLShimErrorKind {
  /// libxml2 found the input not well-formed XML (or could not decode it).
  CXMLShimErrorKindMalformed = 1,
  /// The input uses a feature refused for safety: a DOCTYPE internal subset, an entity declaration, or a
  /// reference to an entity other than the five predefined ones.
  CXMLShimErrorKindForbidden = 2,
  /// The input exceeds a bound libxml2 enforces itself (element nesting, input size).
  CXMLShimErrorKindLimitExceeded = 3,
} CXMLShimErrorKind;

/// Callbacks the parser makes while it streams through a document, all with the `context` passed to
/// `cxml_shim_parse`. Lines are 1-based. The three content callbacks return 0 to continue or any other
/// value to stop the parse (the Swift side then holds the reason).
typedef struct CXMLShimHandlers {
  /// An element starts. `prefix` is NULL unless the name had a namespace prefix; `name` is the local
  /// name; both are NUL-terminated UTF-8 and valid only during the call.
  int (*_Nonnull startElement)(void *_Nullable context, CXMLShimTag tag,
                               const char *_Nullable prefix, const char *_Nonnull name, int line);
  /// The innermost open element ends.
  int (*_Nonnull endElement)(void *_Nullable context, int line);
  /// Character data (text, CDATA, resolved character and predefined entity references) as UTF-8; one
  /// run of text may arrive in several calls. Text made only of whitespace (space, tab, CR, LF) is
  /// not reported unless the innermost open element is a value or key element (not `plist`, `dict`,
  /// `array` or an unknown element).
  int (*_Nonnull characters)(void *_Nullable context, const unsigned char *_Nonnull bytes, int length,
                             int line);
  /// The parse failed. `message` is NUL-terminated UTF-8, valid only during the call. Called at most once
  /// per parse; no other callback follows it.
  void (*_Nonnull error)(void *_Nullable context, CXMLShimErrorKind kind, int line,
                         const char *_Nonnull message);
} CXMLShimHandlers;

/// Parses `length` bytes of XML with libxml2's streaming SAX2 parser, calling `handlers`.
///
/// Never loads a DTD or an external entity, never touches the network, and refuses DOCTYPE internal
/// subsets and non-predefined entity references. Safe to call from several threads at once: each thread
/// has its own parser context (kept, reset, from one of its parses to the next) and each call its own
/// error handler.
///
/// Returns 0 when the document was parsed to its end without an error, and non-zero when a callback stopped
/// the parse or `handlers->error` was called.
int cxml_shim_parse(const void *_Nullable bytes, size_t length,
                    const CXMLShimHandlers *_Nonnull handlers, void *_Nullable context);

/// The deepest element nesting libxml2 accepts (the shim raises libxml2's default of 256 to this).
extern const int cxml_shim_max_element_depth;

#ifdef __cplusplus
}
#endif

#endif

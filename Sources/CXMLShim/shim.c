// The one place that includes libxml2: a streaming SAX2 parse that hands element events and UTF-8 text
// to the callbacks in CXMLShim.h, with every feature that could reach outside the input switched off.

#include "CXMLShim.h"

// Where libxml2's headers are found. Off Apple platforms pkg-config (the CLibXML2 target) puts
// their directory (/usr/include/libxml2 on Debian) on the search path, so <libxml/...> resolves.
// Apple's SDKs keep them in usr/include/libxml2 too, which is on no search path, and SwiftPM takes no
// SDK-relative header path. C targets there are compiled with clang modules, and the SDKs declare
// a `libxml2` module (what has let packages `import libxml2` with no header path since Xcode 11.4);
// the second spelling is meant to resolve through it, the headers' own <libxml/...> includes with
// it. That branch is prepared, not built: no Apple SDK is available to this package's CI, and if it
// fails there, a dependent can pass -Xcc -I$SDKROOT/usr/include/libxml2 to take the first.
#if __has_include(<libxml/parser.h>)
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/xmlIO.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlversion.h>
#else
#include <libxml2/libxml/parser.h>
#include <libxml2/libxml/parserInternals.h>
#include <libxml2/libxml/xmlIO.h>
#include <libxml2/libxml/xmlerror.h>
#include <libxml2/libxml/xmlversion.h>
#endif
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Apple's readers accept 512 nested containers inside <plist>; libxml2 2.9 refuses more than 256 open
// elements unless XML_PARSE_HUGE, which would also lift every other size limit. Raising only the depth
// bound keeps the rest. The Swift reader enforces its own, usually tighter, depth limit first.
const int cxml_shim_max_element_depth = 4096;

static pthread_once_t shim_once = PTHREAD_ONCE_INIT;

static const char shim_apple_prolog[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" "
    "\"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n";
static const size_t shim_apple_prolog_length = sizeof shim_apple_prolog - 1;

// Each thread keeps the parser context of its last parse, reset, for its next one: creating a
// context (its handler table, stacks and name dictionary) and freeing it cost as much as parsing a
// few hundred elements. libxml2's own xmlCtxtRead* functions reuse contexts the same way, through
// xmlCtxtReset, which clears everything a parse leaves behind. A context that grew unusually (names
// in its dictionary, attributes, namespaces, nesting) is freed rather than kept with that memory.
typedef struct ShimCache {
  xmlParserCtxtPtr parser;
  int busy;
} ShimCache;

static pthread_key_t shim_cache_key;
static int shim_cache_ready;

enum {
  shim_cached_names = 512,
  shim_cached_attributes = 256,
  shim_cached_namespaces = 64,
  shim_cached_depth = 512,
};

static void shim_cache_destroy(void *value) {
  ShimCache *cache = value;
  if (cache->parser != NULL) xmlFreeParserCtxt(cache->parser);
  free(cache);
}

static void shim_initialize(void) {
  // xmlInitParser is not safe to race with parses on other threads, so it runs exactly once.
  xmlInitParser();
  if (xmlParserMaxDepth < (unsigned int)cxml_shim_max_element_depth) {
    xmlParserMaxDepth = (unsigned int)cxml_shim_max_element_depth;
  }
  shim_cache_ready = pthread_key_create(&shim_cache_key, shim_cache_destroy) == 0;
}

// This thread's cache, or NULL when there is none to use (a parse started from inside another's
// callback gets a context of its own).
static ShimCache *shim_cache(void) {
  if (!shim_cache_ready) return NULL;
  ShimCache *cache = pthread_getspecific(shim_cache_key);
  if (cache == NULL) {
    cache = calloc(1, sizeof *cache);
    if (cache == NULL) return NULL;
    if (pthread_setspecific(shim_cache_key, cache) != 0) {
      free(cache);
      return NULL;
    }
  }
  return cache->busy ? NULL : cache;
}

// Whether a context is worth keeping after its parse.
static int shim_keeps(xmlParserCtxtPtr parser) {
  return xmlDictSize(parser->dict) <= shim_cached_names &&
         parser->maxatts <= shim_cached_attributes && parser->nsMax <= shim_cached_namespaces &&
         parser->nameMax <= shim_cached_depth && parser->nodeMax <= shim_cached_depth &&
         parser->spaceMax <= shim_cached_depth && parser->input_id < INT_MAX / 2;
}

typedef struct ShimState {
  xmlParserCtxtPtr parser;
  const CXMLShimHandlers *handlers;
  void *context;
  int failed;
  /// The innermost open element is a value or key element (text inside it is its content).
  int inLeaf;
  /// The length of what libxml2 is given.
  size_t length;
} ShimState;

static int shim_line(const ShimState *state) {
  if (state->parser->input == NULL) return 0;
  return state->parser->input->line;
}

// Whether libxml2 has read the whole input: a file cut short fails there. The buffer's end is checked
// first; the count of bytes consumed, which an encoder's conversion makes dearer, only after it.
static int shim_at_end(const ShimState *state) {
  const xmlParserInputPtr input = state->parser->input;
  if (input == NULL || input->cur == NULL || input->end == NULL || input->cur < input->end) return 0;
  long consumed = xmlByteConsumed(state->parser);
  return consumed >= 0 && (size_t)consumed >= state->length;
}

// Stops callbacks without freeing the input buffer: xmlStopParser releases the input under the parser's
// feet, which is only safe at points where libxml2 re-checks its state straight after the callback.
// Clearing disableSAX and moving to EOF makes libxml2's own loops wind down, as after a fatal error.
static void shim_halt(ShimState *state) {
  state->failed = 1;
  state->parser->disableSAX = 1;
  state->parser->instate = XML_PARSER_EOF;
}

static void shim_fail(ShimState *state, CXMLShimErrorKind kind, int line, const char *message) {
  if (state->failed) return;
  state->handlers->error(state->context, kind, line, message);
  shim_halt(state);
}

// Names are NUL-terminated; comparing in place, stopping at the first difference (so never past the
// name's end), is cheaper than a call to strcmp per candidate, and this runs for every element.
static inline int shim_is(const char *name, const char *expected) {
  while (*expected != 0 && *name == *expected) {
    name++;
    expected++;
  }
  return *name == *expected;
}

static CXMLShimTag shim_classify(const xmlChar *prefix, const xmlChar *name) {
  if (prefix != NULL) return CXMLShimTagUnknown;
  const char *n = (const char *)name;
  switch (n[0]) {
  case 'a':
    if (shim_is(n, "array")) return CXMLShimTagArray;
    break;
  case 'd':
    if (shim_is(n, "dict")) return CXMLShimTagDict;
    if (shim_is(n, "data")) return CXMLShimTagData;
    if (shim_is(n, "date")) return CXMLShimTagDate;
    break;
  case 'f':
    if (shim_is(n, "false")) return CXMLShimTagFalse;
    break;
  case 'i':
    if (shim_is(n, "integer")) return CXMLShimTagInteger;
    break;
  case 'k':
    if (n[1] == 'e' && n[2] == 'y' && n[3] == 0) return CXMLShimTagKey;
    break;
  case 'p':
    if (shim_is(n, "plist")) return CXMLShimTagPlist;
    break;
  case 'r':
    if (shim_is(n, "real")) return CXMLShimTagReal;
    break;
  case 's':
    if (shim_is(n, "string")) return CXMLShimTagString;
    break;
  case 't':
    if (shim_is(n, "true")) return CXMLShimTagTrue;
    break;
  default:
    break;
  }
  return CXMLShimTagUnknown;
}

static void shim_start_element(void *user, const xmlChar *localname, const xmlChar *prefix,
                               const xmlChar *URI, int nb_namespaces, const xmlChar **namespaces,
                               int nb_attributes, int nb_defaulted, const xmlChar **attributes) {
  (void)URI;
  (void)nb_namespaces;
  (void)namespaces;
  (void)nb_attributes;
  (void)nb_defaulted;
  (void)attributes;
  ShimState *state = user;
  if (state->failed) return;
  CXMLShimTag tag = shim_classify(prefix, localname);
  // A name the input's end cut short is no unknown element: libxml2 reports the start tag it then
  // fails to end only after this call.
  if (tag == CXMLShimTagUnknown && shim_at_end(state)) {
    char message[160];
    snprintf(message, sizeof message, "the input ends inside the start tag <%.64s: a file cut short?",
             (const char *)localname);
    shim_fail(state, CXMLShimErrorKindMalformed, shim_line(state), message);
    return;
  }
  state->inLeaf = tag != CXMLShimTagUnknown && tag != CXMLShimTagPlist && tag != CXMLShimTagDict &&
                  tag != CXMLShimTagArray;
  if (state->handlers->startElement(state->context, tag, (const char *)prefix,
                                    (const char *)localname, shim_line(state)) != 0) {
    shim_halt(state);
  }
}

static void shim_end_element(void *user, const xmlChar *localname, const xmlChar *prefix,
                             const xmlChar *URI) {
  (void)localname;
  (void)prefix;
  (void)URI;
  ShimState *state = user;
  if (state->failed) return;
  state->inLeaf = 0;
  if (state->handlers->endElement(state->context, shim_line(state)) != 0) shim_halt(state);
}

static void shim_characters(void *user, const xmlChar *bytes, int length) {
  ShimState *state = user;
  if (state->failed || length <= 0) return;
  // Whitespace between elements (the layout of every document) means nothing outside a value's
  // text, where the reader skips it too: not calling out for it saves a call per line.
  if (!state->inLeaf) {
    int index = 0;
    while (index < length && (bytes[index] == ' ' || bytes[index] == '\n' ||
                              bytes[index] == '\t' || bytes[index] == '\r')) {
      index++;
    }
    if (index == length) return;
  }
  if (state->handlers->characters(state->context, bytes, length, shim_line(state)) != 0) {
    shim_halt(state);
  }
}

// Called once the XML declaration has been read, so the encoding is settled. A memory parse holds the
// whole document in its buffer from the start, yet libxml2 2.9 asks its read callback for more at
// every GROW within the last 250 bytes: the first time it doubles the buffer (reallocating and
// copying the document), and every time it goes through the buffer-growing code for nothing (about
// 17,000 instructions a parse of a 7 KB document). Without a read callback, a GROW returns at once
// having read nothing, which is what the callback gives. Only when no encoder converts the document
// (with one, GROW is what converts the rest), and only when the document is within
// XML_MAX_LOOKUP_LIMIT, above which libxml2 2.9 treats inputs with other callbacks differently
// (its "Huge input lookup" check).
static void shim_start_document(void *user) {
  ShimState *state = user;
  xmlParserCtxtPtr parser = state->parser;
  if (parser->inputNr != 1 || parser->input == NULL) return;
  xmlParserInputBufferPtr buffer = parser->input->buf;
  if (buffer == NULL || buffer->encoder != NULL || state->length > XML_MAX_LOOKUP_LIMIT) return;
  buffer->readcallback = NULL;
}

// A DOCTYPE with an internal subset is the only way to declare entities (external ones that read files,
// nested ones that expand exponentially), so it is refused before libxml2 reads a single declaration.
static void shim_internal_subset(void *user, const xmlChar *name, const xmlChar *externalID,
                                 const xmlChar *systemID) {
  (void)name;
  (void)externalID;
  (void)systemID;
  ShimState *state = user;
  if (state->failed) return;
  xmlParserInputPtr input = state->parser->input;
  if (input == NULL || input->cur == NULL || input->cur[0] != '[') return;
  shim_fail(state, CXMLShimErrorKindForbidden, shim_line(state),
            "a DOCTYPE internal subset is not allowed (it could declare entities)");
  // Safe here: xmlParseDocTypeDecl checks for EOF straight after this callback returns.
  xmlStopParser(state->parser);
}

// libxml2 asks for every entity other than the five predefined ones; none exists, and naming one is
// refused rather than left as an undefined-entity warning (which libxml2 tolerates after a DOCTYPE).
static xmlEntityPtr shim_get_entity(void *user, const xmlChar *name) {
  ShimState *state = user;
  if (state->failed) return NULL;
  char message[200];
  snprintf(message, sizeof message, "entity reference &%.100s; is not allowed (only the five "
           "predefined entities and character references are)", (const char *)name);
  shim_fail(state, CXMLShimErrorKindForbidden, shim_line(state), message);
  return NULL;
}

// Unreachable while internal subsets are refused; kept so a declaration can never be recorded.
static void shim_entity_decl(void *user, const xmlChar *name, int type, const xmlChar *publicId,
                             const xmlChar *systemId, xmlChar *content) {
  (void)name;
  (void)type;
  (void)publicId;
  (void)systemId;
  (void)content;
  ShimState *state = user;
  shim_fail(state, CXMLShimErrorKindForbidden, shim_line(state),
            "entity declarations are not allowed");
}

#if LIBXML_VERSION >= 21200
static void shim_structured_error(void *user, const xmlError *error) {
#else
static void shim_structured_error(void *user, xmlErrorPtr error) {
#endif
  ShimState *state = user;
  if (state == NULL || error == NULL || state->failed) return;
  // Warnings are not well-formedness errors, and namespace errors (an undeclared prefix) are not errors
  // in plain XML 1.0, which is all CoreFoundation's reader knows; a prefixed element is still refused
  // as an unknown tag.
  if (error->level == XML_ERR_WARNING || error->domain == XML_FROM_NAMESPACE) return;
  CXMLShimErrorKind kind = CXMLShimErrorKindMalformed;
  const char *message = error->message != NULL ? error->message : "XML parse error";
  if (error->code == XML_ERR_UNDECLARED_ENTITY || error->code == XML_WAR_UNDECLARED_ENTITY) {
    kind = CXMLShimErrorKindForbidden;
  } else if (error->code == XML_ERR_INTERNAL_ERROR && strstr(message, "depth") != NULL) {
    // libxml2's own message recommends XML_PARSE_HUGE, which this reader never uses.
    kind = CXMLShimErrorKindLimitExceeded;
    message = "elements nested deeper than libxml2's cap of 4096";
  }
  // A file cut short: libxml2's words give the line the element opened on beside the line the error
  // is reported at, where the input ends ("Premature end of data in tag data line 88" at line 113),
  // and leave the cause unsaid.
  char explained[320];
  if (kind == CXMLShimErrorKindMalformed && shim_at_end(state)) {
    if (error->code == XML_ERR_TAG_NOT_FINISHED && error->str1 != NULL) {
      snprintf(explained, sizeof explained,
               "the input ends inside <%.64s>, opened at line %d: a file cut short?", error->str1,
               error->int1);
    } else if (error->code == XML_ERR_GT_REQUIRED && error->str1 != NULL) {
      snprintf(explained, sizeof explained,
               "the input ends inside the start tag <%.64s: a file cut short?", error->str1);
    } else {
      // libxml2's message ends in a line break.
      int length = (int)strcspn(message, "\n");
      snprintf(explained, sizeof explained, "%.*s, where the input ends: a file cut short?",
               length > 200 ? 200 : length, message);
    }
    message = explained;
  }
  shim_fail(state, kind, error->line > 0 ? error->line : shim_line(state), message);
}

static void shim_silent_generic_error(void *context, const char *message, ...) {
  (void)context;
  (void)message;
}

int cxml_shim_parse(const void *bytes, size_t length, const CXMLShimHandlers *handlers,
                    void *context) {
  pthread_once(&shim_once, shim_initialize);
  ShimState state = {NULL, handlers, context, 0, 0, length};

  if (length > INT_MAX) {
    handlers->error(context, CXMLShimErrorKindLimitExceeded, 0,
                    "input is larger than libxml2 can parse (2 GiB)");
    return 1;
  }
  if (bytes == NULL || length == 0) {
    handlers->error(context, CXMLShimErrorKindMalformed, 1, "Document is empty");
    return 1;
  }

  // The prolog CoreFoundation writes before every XML property list, byte for byte, is not given to
  // libxml2 when the root element's start tag follows it: reading it (the XML declaration with
  // UTF-8, which switches nothing, and a DOCTYPE naming Apple's DTD with no internal subset, which
  // loads nothing) is a tenth of a resume blob's parse, and changes nothing libxml2 does after it.
  // The rest is parsed as a document without a prolog, from line 3. The two differ only in what
  // libxml2 records about the DOCTYPE (an external subset exists), which decides whether an
  // undeclared entity is an error or a warning; the shim refuses every such entity before either.
  size_t skipped = 0;
  if (length > shim_apple_prolog_length + 6 &&
      memcmp(bytes, shim_apple_prolog, shim_apple_prolog_length) == 0 &&
      memcmp((const char *)bytes + shim_apple_prolog_length, "<plist", 6) == 0) {
    skipped = shim_apple_prolog_length;
  }
  state.length = length - skipped;

  // What xmlCreateMemoryParserCtxt does, on this thread's kept context when there is one.
  ShimCache *cache = shim_cache();
  xmlParserCtxtPtr parser = cache != NULL && cache->parser != NULL ? cache->parser : xmlNewParserCtxt();
  xmlParserInputBufferPtr buffer = NULL;
  xmlParserInputPtr input = NULL;
  if (parser != NULL) {
    buffer = xmlParserInputBufferCreateMem((const char *)bytes + skipped, (int)(length - skipped),
                                           XML_CHAR_ENCODING_NONE);
  }
  if (buffer != NULL) {
    input = xmlNewIOInputStream(parser, buffer, XML_CHAR_ENCODING_NONE);
    if (input == NULL) xmlFreeParserInputBuffer(buffer);
  }
  // inputPush frees the input when it fails (only when out of memory).
  if (input == NULL || inputPush(parser, input) < 0) {
    if (parser != NULL) {
      xmlFreeParserCtxt(parser);
      if (cache != NULL) cache->parser = NULL;
    }
    handlers->error(context, CXMLShimErrorKindMalformed, 1, "could not create an XML parser");
    return 1;
  }
  if (cache != NULL) {
    cache->parser = parser;
    cache->busy = 1;
  }
  if (skipped > 0) input->line = 3;
  state.parser = parser;

  // Never NOENT (substitutes entities), DTDLOAD/DTDATTR/DTDVALID (fetch the external DTD), HUGE (lifts
  // size limits) or RECOVER (accepts broken documents).
  xmlCtxtUseOptions(parser, XML_PARSE_NONET);

  // Options are applied first because xmlCtxtUseOptions may patch the handler table.
  xmlSAXHandlerPtr sax = parser->sax;
  memset(sax, 0, sizeof *sax);
  sax->initialized = XML_SAX2_MAGIC;
  sax->startDocument = shim_start_document;
  sax->startElementNs = shim_start_element;
  sax->endElementNs = shim_end_element;
  sax->characters = shim_characters;
  sax->ignorableWhitespace = shim_characters;
  sax->cdataBlock = shim_characters;
  sax->internalSubset = shim_internal_subset;
  sax->getEntity = shim_get_entity;
  sax->getParameterEntity = shim_get_entity;
  sax->entityDecl = shim_entity_decl;
  // The per-context structured handler receives every parser error with this parse's own state, so
  // concurrent parses never share error state.
  sax->serror = shim_structured_error;
  parser->userData = &state;

  // Some libxml2 paths (encoding conversion, I/O) report through the generic error function, which
  // prints to stderr by default. It is per thread in libxml2, so silence it around this parse only;
  // the structured handler above still sees every error that matters.
  xmlGenericErrorFunc previousGeneric = xmlGenericError;
  void *previousGenericContext = xmlGenericErrorContext;
  xmlSetGenericErrorFunc(NULL, shim_silent_generic_error);

  xmlParseDocument(parser);

  xmlSetGenericErrorFunc(previousGenericContext, previousGeneric);

  if (!state.failed && !parser->wellFormed) {
    shim_fail(&state, CXMLShimErrorKindMalformed, shim_line(&state), "XML is not well-formed");
  }
  int failed = state.failed;
  if (cache != NULL && shim_keeps(parser)) {
    // Frees the document's copy now rather than at the next parse.
    xmlCtxtReset(parser);
  } else {
    xmlFreeParserCtxt(parser);
    if (cache != NULL) cache->parser = NULL;
  }
  if (cache != NULL) cache->busy = 0;
  return failed;
}

// The one place that includes libcurl's headers (Linux only: the downloader's curl transport).
// libcurl's setters and getters are variadic, which Swift cannot call; these plain functions set up
// one HTTP exchange and drive a multi handle, for Downloader/CurlTransport.swift.
#ifndef CCURLSHIM_H
#define CCURLSHIM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// One HTTP exchange (an easy handle with its header list and error buffer).
typedef struct rd_curl_transfer rd_curl_transfer;

/// A multi handle: the exchanges it drives share its connections.
typedef struct rd_curl_loop rd_curl_loop;

/// Called with a header line (CRLF included) or a piece of the body. Returns `count` to go on;
/// anything else ends the exchange (libcurl reports it as a write error).
typedef size_t (*rd_curl_data_fn)(void *context, const char *bytes, size_t count);

/// What one request is.
typedef struct {
  /// The URL (http or https; redirects are not followed by libcurl).
  const char *url;
  /// "Name: value" lines, sent as they are (in place of libcurl's own field of that name).
  const char *const *headers;
  size_t header_count;
  /// Connecting may take this long (0: libcurl's default).
  long connect_timeout_ms;
  /// No byte for this many seconds ends the exchange (0: never).
  long idle_timeout_s;
  /// A PEM file of the certificate authorities to trust, in place of the system's bundle
  /// (NULL: the system's).
  const char *ca_file;
  /// The receive buffer: the largest piece of body handed over at once.
  long buffer_size;
} rd_curl_request;

/// Initialises libcurl for the process; returns 0 on success. Safe to call more than once.
int rd_curl_global_init(void);

/// A new exchange for `request` whose header lines and body pieces go to `on_header` and
/// `on_body` with `context`; NULL when libcurl refuses an option (its text in `error`, at least
/// 256 bytes).
rd_curl_transfer *rd_curl_transfer_new(const rd_curl_request *request, void *context,
                                       rd_curl_data_fn on_header, rd_curl_data_fn on_body,
                                       char *error, size_t error_size);

/// Frees an exchange (removed from its loop first).
void rd_curl_transfer_free(rd_curl_transfer *transfer);

/// The context the exchange was made with.
void *rd_curl_transfer_context(const rd_curl_transfer *transfer);

/// The HTTP major version of the response (1, 2 or 3), 0 when not known yet.
long rd_curl_transfer_http_version(rd_curl_transfer *transfer);

/// What went wrong, for a result code: libcurl's detailed message when it wrote one, else the
/// code's description.
const char *rd_curl_transfer_error(const rd_curl_transfer *transfer, int result);

/// A new loop allowing `max_host_connections` connections to a host (0: no limit); with
/// `multiplex` 0, HTTP/2 streams are not multiplexed over one connection (each exchange gets a
/// connection of its own, as segments should). NULL when out of memory.
rd_curl_loop *rd_curl_loop_new(long max_host_connections, int multiplex);

/// Frees a loop with no exchange left in it.
void rd_curl_loop_free(rd_curl_loop *loop);

/// Starts an exchange; 0 on success.
int rd_curl_loop_add(rd_curl_loop *loop, rd_curl_transfer *transfer);

/// Stops an exchange (it can then be freed); 0 on success.
int rd_curl_loop_remove(rd_curl_loop *loop, rd_curl_transfer *transfer);

/// Does what can be done without waiting (reads, writes, timers); 0 on success.
int rd_curl_loop_perform(rd_curl_loop *loop);

/// Sleeps until a socket of the loop is ready, libcurl's next timer, `timeout_ms`, or a wake-up;
/// 0 on success.
int rd_curl_loop_wait(rd_curl_loop *loop, int timeout_ms);

/// Wakes the loop from `rd_curl_loop_wait`; safe from any thread.
int rd_curl_loop_wake(rd_curl_loop *loop);

/// The next exchange that ended (its result code in `result`: 0 for success), or NULL.
rd_curl_transfer *rd_curl_loop_next_done(rd_curl_loop *loop, int *result);

/// The result code of an exchange its own callback ended.
int rd_curl_result_aborted(void);

/// Whether a result code says the server's certificate was not trusted (or the authorities to
/// trust could not be read): trying again cannot help.
int rd_curl_result_untrusted(int result);

/// libcurl's version text ("libcurl/7.88.1 OpenSSL/3.0.17 …").
const char *rd_curl_version(void);

#ifdef __cplusplus
}
#endif

#endif

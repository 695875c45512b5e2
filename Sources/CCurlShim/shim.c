// libcurl behind plain functions (see include/CCurlShim.h). Built on Linux only: Package.swift
// conditions the downloader's dependency on this target, and the rest of the file compiles to
// nothing elsewhere.
#if defined(__linux__)

#include "CCurlShim.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rd_curl_transfer {
  CURL *easy;
  struct curl_slist *headers;
  void *context;
  rd_curl_data_fn on_header;
  rd_curl_data_fn on_body;
  char error[CURL_ERROR_SIZE];
};

struct rd_curl_loop {
  CURLM *multi;
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static int global_result = -1;
// Sent when the request names no User-Agent of its own (libcurl sends none by default, and some
// servers refuse a request without one).
static char user_agent[64];

static void global_init(void) {
  global_result = (int)curl_global_init(CURL_GLOBAL_DEFAULT);
  const curl_version_info_data *info = curl_version_info(CURLVERSION_NOW);
  snprintf(user_agent, sizeof user_agent, "resumedata libcurl/%s",
           info && info->version ? info->version : "?");
}

int rd_curl_global_init(void) {
  pthread_once(&global_once, global_init);
  return global_result;
}

static size_t header_callback(char *bytes, size_t size, size_t count, void *user) {
  rd_curl_transfer *transfer = user;
  return transfer->on_header(transfer->context, bytes, size * count);
}

static size_t body_callback(char *bytes, size_t size, size_t count, void *user) {
  rd_curl_transfer *transfer = user;
  size_t total = size * count;
  size_t taken = transfer->on_body(transfer->context, bytes, total);
  // A zero-length piece cannot be refused by returning 0; CURL_WRITEFUNC_ERROR (7.87) can.
  return taken == total ? taken : CURL_WRITEFUNC_ERROR;
}

static void copy_text(char *out, size_t size, const char *text) {
  if (size == 0) return;
  strncpy(out, text, size - 1);
  out[size - 1] = 0;
}

rd_curl_transfer *rd_curl_transfer_new(const rd_curl_request *request, void *context,
                                       rd_curl_data_fn on_header, rd_curl_data_fn on_body,
                                       char *error, size_t error_size) {
  rd_curl_transfer *transfer = calloc(1, sizeof *transfer);
  if (!transfer) {
    copy_text(error, error_size, "out of memory");
    return NULL;
  }
  transfer->easy = curl_easy_init();
  if (!transfer->easy) {
    free(transfer);
    copy_text(error, error_size, "libcurl could not make an easy handle");
    return NULL;
  }
  transfer->context = context;
  transfer->on_header = on_header;
  transfer->on_body = on_body;
  for (size_t i = 0; i < request->header_count; i++) {
    struct curl_slist *next = curl_slist_append(transfer->headers, request->headers[i]);
    if (!next) {
      rd_curl_transfer_free(transfer);
      copy_text(error, error_size, "out of memory");
      return NULL;
    }
    transfer->headers = next;
  }
  CURL *easy = transfer->easy;
  CURLcode code = CURLE_OK;
#define SET(option, value)                           \
  if (code == CURLE_OK) {                            \
    code = curl_easy_setopt(easy, option, value);    \
    if (code != CURLE_OK) failed = #option;          \
  }
  const char *failed = NULL;
  SET(CURLOPT_URL, request->url);
  SET(CURLOPT_PRIVATE, transfer);
  SET(CURLOPT_NOSIGNAL, 1L);
  SET(CURLOPT_PROTOCOLS_STR, "http,https");
  // Redirects are the caller's: it decides which to follow and what goes with them.
  SET(CURLOPT_FOLLOWLOCATION, 0L);
  SET(CURLOPT_HTTPHEADER, transfer->headers);
  // Decodes a body a server encodes against `Accept-Encoding: identity` (the request's own field
  // replaces the one this would send), as URLSession does.
  SET(CURLOPT_ACCEPT_ENCODING, "");
  // A proxy's CONNECT answer is not the server's.
  SET(CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L);
  SET(CURLOPT_HEADERFUNCTION, header_callback);
  SET(CURLOPT_HEADERDATA, transfer);
  SET(CURLOPT_WRITEFUNCTION, body_callback);
  SET(CURLOPT_WRITEDATA, transfer);
  SET(CURLOPT_ERRORBUFFER, transfer->error);
  // A "User-Agent" line among the headers replaces this one.
  SET(CURLOPT_USERAGENT, user_agent);
  if (request->connect_timeout_ms > 0) SET(CURLOPT_CONNECTTIMEOUT_MS, request->connect_timeout_ms);
  if (request->idle_timeout_s > 0) {
    SET(CURLOPT_LOW_SPEED_LIMIT, 1L);
    SET(CURLOPT_LOW_SPEED_TIME, request->idle_timeout_s);
  }
  if (request->ca_file) SET(CURLOPT_CAINFO, request->ca_file);
  if (request->buffer_size > 0) SET(CURLOPT_BUFFERSIZE, request->buffer_size);
#undef SET
  if (code != CURLE_OK) {
    char text[200];
    snprintf(text, sizeof text, "libcurl refused %s: %s", failed ? failed : "an option",
             curl_easy_strerror(code));
    copy_text(error, error_size, text);
    rd_curl_transfer_free(transfer);
    return NULL;
  }
  return transfer;
}

void rd_curl_transfer_free(rd_curl_transfer *transfer) {
  if (!transfer) return;
  if (transfer->easy) curl_easy_cleanup(transfer->easy);
  curl_slist_free_all(transfer->headers);
  free(transfer);
}

void *rd_curl_transfer_context(const rd_curl_transfer *transfer) { return transfer->context; }

long rd_curl_transfer_http_version(rd_curl_transfer *transfer) {
  long version = 0;
  if (curl_easy_getinfo(transfer->easy, CURLINFO_HTTP_VERSION, &version) != CURLE_OK) return 0;
  switch (version) {
    case CURL_HTTP_VERSION_1_0:
    case CURL_HTTP_VERSION_1_1:
      return 1;
    case CURL_HTTP_VERSION_2_0:
      return 2;
    case CURL_HTTP_VERSION_3:
      return 3;
    default:
      return 0;
  }
}

const char *rd_curl_transfer_error(const rd_curl_transfer *transfer, int result) {
  if (transfer->error[0]) return transfer->error;
  return curl_easy_strerror((CURLcode)result);
}

rd_curl_loop *rd_curl_loop_new(long max_host_connections, int multiplex) {
  rd_curl_loop *loop = calloc(1, sizeof *loop);
  if (!loop) return NULL;
  loop->multi = curl_multi_init();
  if (!loop->multi) {
    free(loop);
    return NULL;
  }
  if (max_host_connections > 0)
    curl_multi_setopt(loop->multi, CURLMOPT_MAX_HOST_CONNECTIONS, max_host_connections);
  curl_multi_setopt(loop->multi, CURLMOPT_PIPELINING,
                    multiplex ? (long)CURLPIPE_MULTIPLEX : (long)CURLPIPE_NOTHING);
  return loop;
}

void rd_curl_loop_free(rd_curl_loop *loop) {
  if (!loop) return;
  curl_multi_cleanup(loop->multi);
  free(loop);
}

int rd_curl_loop_add(rd_curl_loop *loop, rd_curl_transfer *transfer) {
  return (int)curl_multi_add_handle(loop->multi, transfer->easy);
}

int rd_curl_loop_remove(rd_curl_loop *loop, rd_curl_transfer *transfer) {
  return (int)curl_multi_remove_handle(loop->multi, transfer->easy);
}

int rd_curl_loop_perform(rd_curl_loop *loop) {
  int running = 0;
  return (int)curl_multi_perform(loop->multi, &running);
}

int rd_curl_loop_wait(rd_curl_loop *loop, int timeout_ms) {
  return (int)curl_multi_poll(loop->multi, NULL, 0, timeout_ms, NULL);
}

int rd_curl_loop_wake(rd_curl_loop *loop) { return (int)curl_multi_wakeup(loop->multi); }

rd_curl_transfer *rd_curl_loop_next_done(rd_curl_loop *loop, int *result) {
  int left = 0;
  CURLMsg *message;
  while ((message = curl_multi_info_read(loop->multi, &left))) {
    if (message->msg != CURLMSG_DONE) continue;
    rd_curl_transfer *transfer = NULL;
    curl_easy_getinfo(message->easy_handle, CURLINFO_PRIVATE, (char **)&transfer);
    *result = (int)message->data.result;
    return transfer;
  }
  return NULL;
}

int rd_curl_result_aborted(void) { return (int)CURLE_WRITE_ERROR; }

int rd_curl_result_untrusted(int result) {
  switch ((CURLcode)result) {
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
      return 1;
    default:
      return 0;
  }
}

const char *rd_curl_version(void) { return curl_version(); }

#endif

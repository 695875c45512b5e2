// libplist as a benchmark peer of `resumedata-bench peers`: times decoding or encoding one property
// list file with libplist 2.2 (plist_from_bin / plist_to_bin, plist_from_xml / plist_to_xml), the
// way `resumedata-bench plist` times ours, and prints the best seconds per call and the number of
// values decoded. Not part of the Swift package: Benchmarks/peers-bench.sh compiles it with
// `gcc -O2 $(pkg-config --cflags --libs libplist-2.0)`.
//
// usage: plist-peer [--rounds N] [--round-time S] [--budget S] [--calls N] FILE binary|xml decode|encode
//
// Prints one line, `<seconds per call> <values>`: the fastest round's average, and the values of
// the decoded list counted as resumedata-bench counts them (every value once, containers
// included, dictionary keys not). With --calls N it times nothing: it makes N calls and prints
// `0 <values>`, for callgrind to count (N against 0).
//
// Decoding is timed with the freeing of what it built (plist_free), as ours and Foundation's are;
// encoding writes the list decoded once beforehand, and frees the buffer it gets.

#include <errno.h>
#include <math.h>
#include <plist/plist.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  int binary;
  const char *bytes;
  uint32_t length;
  plist_t decoded;
} Input;

static double now(void) {
  struct timespec time;
  clock_gettime(CLOCK_MONOTONIC, &time);
  return (double)time.tv_sec + (double)time.tv_nsec * 1e-9;
}

// 0 when the call worked.
static int decode_once(const Input *input) {
  plist_t value = NULL;
  if (input->binary) {
    plist_from_bin(input->bytes, input->length, &value);
  } else {
    plist_from_xml(input->bytes, input->length, &value);
  }
  if (value == NULL) return 1;
  plist_free(value);
  return 0;
}

static int encode_once(const Input *input) {
  char *out = NULL;
  uint32_t length = 0;
  if (input->binary) {
    plist_to_bin(input->decoded, &out, &length);
    if (out == NULL || length == 0) return 1;
    plist_to_bin_free(out);
  } else {
    plist_to_xml(input->decoded, &out, &length);
    if (out == NULL || length == 0) return 1;
    plist_to_xml_free(out);
  }
  return 0;
}

static long count_values(plist_t node) {
  long count = 1;
  switch (plist_get_node_type(node)) {
    case PLIST_DICT: {
      plist_dict_iter iter = NULL;
      plist_dict_new_iter(node, &iter);
      for (;;) {
        char *key = NULL;
        plist_t child = NULL;
        plist_dict_next_item(node, iter, &key, &child);
        if (child == NULL) break;
        free(key);
        count += count_values(child);
      }
      free(iter);
      break;
    }
    case PLIST_ARRAY: {
      uint32_t size = plist_array_get_size(node);
      for (uint32_t index = 0; index < size; index++) {
        count += count_values(plist_array_get_item(node, index));
      }
      break;
    }
    default:
      break;
  }
  return count;
}

static int usage(const char *message) {
  fprintf(stderr, "Error: %s\n", message);
  fprintf(stderr,
          "Usage: plist-peer [--rounds N] [--round-time S] [--budget S] [--calls N] FILE "
          "binary|xml decode|encode\n");
  return 64;
}

int main(int argc, char **argv) {
  int rounds = 3;
  double round_time = 0.3;
  double budget = 5.0;
  long calls = -1;
  const char *positional[3];
  int positionals = 0;
  for (int index = 1; index < argc; index++) {
    const char *argument = argv[index];
    if (argument[0] == '-' && argument[1] == '-') {
      if (index + 1 >= argc) return usage("an option needs a value");
      const char *value = argv[++index];
      char *end = NULL;
      errno = 0;
      if (strcmp(argument, "--rounds") == 0) {
        rounds = (int)strtol(value, &end, 10);
        if (*end != '\0' || errno != 0 || rounds <= 0) return usage("--rounds needs a positive count");
      } else if (strcmp(argument, "--round-time") == 0) {
        round_time = strtod(value, &end);
        if (*end != '\0' || errno != 0 || !(round_time > 0) || !isfinite(round_time)) {
          return usage("--round-time needs a positive number of seconds");
        }
      } else if (strcmp(argument, "--budget") == 0) {
        budget = strtod(value, &end);
        if (*end != '\0' || errno != 0 || !(budget > 0) || !isfinite(budget)) {
          return usage("--budget needs a positive number of seconds");
        }
      } else if (strcmp(argument, "--calls") == 0) {
        calls = strtol(value, &end, 10);
        if (*end != '\0' || errno != 0 || calls < 0) return usage("--calls needs a count");
      } else {
        return usage("unknown option");
      }
    } else {
      if (positionals == 3) return usage("too many arguments");
      positional[positionals++] = argument;
    }
  }
  if (positionals != 3) return usage("FILE, a format and an operation are needed");
  Input input = {0};
  if (strcmp(positional[1], "binary") == 0) {
    input.binary = 1;
  } else if (strcmp(positional[1], "xml") != 0) {
    return usage("the format is binary or xml");
  }
  int encode = strcmp(positional[2], "encode") == 0;
  if (!encode && strcmp(positional[2], "decode") != 0) return usage("the operation is decode or encode");

  FILE *file = fopen(positional[0], "rb");
  if (file == NULL) {
    fprintf(stderr, "Error: %s: %s\n", positional[0], strerror(errno));
    return 66;
  }
  fseek(file, 0, SEEK_END);
  long length = ftell(file);
  fseek(file, 0, SEEK_SET);
  if (length <= 0 || length > (long)UINT32_MAX) {
    fprintf(stderr, "Error: %s: empty or too long\n", positional[0]);
    return 66;
  }
  char *bytes = malloc((size_t)length);
  if (bytes == NULL || fread(bytes, 1, (size_t)length, file) != (size_t)length) {
    fprintf(stderr, "Error: %s: could not be read\n", positional[0]);
    return 66;
  }
  fclose(file);
  input.bytes = bytes;
  input.length = (uint32_t)length;
  if (input.binary) {
    plist_from_bin(input.bytes, input.length, &input.decoded);
  } else {
    plist_from_xml(input.bytes, input.length, &input.decoded);
  }
  if (input.decoded == NULL) {
    fprintf(stderr, "Error: %s: libplist could not decode it as %s\n", positional[0], positional[1]);
    return 65;
  }
  long values = count_values(input.decoded);
  int (*call)(const Input *) = encode ? encode_once : decode_once;

  if (calls >= 0) {
    for (long index = 0; index < calls; index++) {
      if (call(&input) != 0) return 65;
    }
    printf("0 %ld\n", values);
    return 0;
  }

  // As resumedata-bench's bestSecondsPerCall: a warm-up call (which counts as the first round when
  // it alone outlasts one), then rounds of at least round_time each, the clock read every `batch`
  // calls, no round started once `budget` seconds have gone; the fastest round's average.
  double warm_up_start = now();
  if (call(&input) != 0) {
    fprintf(stderr, "Error: %s: libplist failed to %s it\n", positional[0], positional[2]);
    return 65;
  }
  double warm_up = now() - warm_up_start;
  double best = INFINITY;
  if (warm_up >= round_time) {
    best = warm_up;
    rounds -= 1;
  }
  for (int round = 0; round < rounds; round++) {
    if ((round > 0 || isfinite(best)) && now() - warm_up_start >= budget) break;
    long made = 0;
    long batch = 1;
    double start = now();
    double elapsed = 0;
    do {
      for (long index = 0; index < batch; index++) {
        if (call(&input) != 0) return 65;
      }
      made += batch;
      elapsed = now() - start;
      if (elapsed < round_time / 100) batch *= 2;
    } while (elapsed < round_time);
    double per_call = elapsed / (double)made;
    if (per_call < best) best = per_call;
  }
  printf("%.9g %ld\n", best, values);
  plist_free(input.decoded);
  free(bytes);
  return 0;
}

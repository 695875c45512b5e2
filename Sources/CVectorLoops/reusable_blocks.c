// PropertyList's `ReusableBlocks` (ReusableBlocks.swift says what it keeps and why), in C: a
// thread's pool is then one thread-local load away, where a pthread key's lookup cost as much as
// the rest of taking a block.

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "CVectorLoops.h"

// Under AddressSanitizer (the fuzz builds) no block is kept or rounded up: each is its own
// allocation of the size asked for, so that a read past its end, or a use after it was given back,
// is caught.
#if defined(__SANITIZE_ADDRESS__)
#define CVL_BLOCKS_UNPOOLED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CVL_BLOCKS_UNPOOLED 1
#endif
#endif

enum {
  // Blocks of 1 KiB << class, for classes 0 to CLASSES - 1.
  CLASSES = CVL_BLOCK_CLASSES,
  SLOTS = 8,
  // Bytes before each block: its class, keeping the block 16-byte aligned.
  HEADER = 16,
};

static const size_t pooled_bytes = (size_t)256 << 10;

struct pool {
  void *slots[CLASSES][SLOTS];
  int counts[CLASSES];
  size_t bytes;
};

static __thread struct pool *current;
static pthread_key_t key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
// Set when no key could be made (the process has used up its keys): then no block is kept.
static int no_key;

// The key's destructor, when the thread ends: its blocks are freed. A block given back after it
// (by another key's destructor) makes a new pool, which the next round of destructors frees.
static void free_pool(void *memory) {
  struct pool *pool = memory;
  for (int size_class = 0; size_class < CLASSES; size_class++) {
    for (int slot = 0; slot < pool->counts[size_class]; slot++) free(pool->slots[size_class][slot]);
  }
  free(pool);
  current = NULL;
}

static void make_key(void) {
  if (pthread_key_create(&key, free_pool) != 0) no_key = 1;
}

// The calling thread's pool, made on first use; NULL only when there is no memory for one.
static inline struct pool *pool_now(void) {
  struct pool *pool = current;
  if (pool) return pool;
  pthread_once(&key_once, make_key);
  if (no_key) return NULL;
  pool = calloc(1, sizeof *pool);
  if (!pool) return NULL;
  if (pthread_setspecific(key, pool) != 0) {
    free(pool);
    return NULL;
  }
  current = pool;
  return pool;
}

// The class of a block of `total` bytes (header included), or -1 beyond the classes.
static inline int size_class(size_t total) {
#ifdef CVL_BLOCKS_UNPOOLED
  (void)total;
  return -1;
#else
  if (total <= 1024) return 0;
  int size_class = 64 - __builtin_clzll((unsigned long long)(total - 1)) - 10;
  return size_class < CLASSES ? size_class : -1;
#endif
}

void *cvl_block_take(size_t count) {
  if (count > SIZE_MAX - HEADER) return NULL;
  int size_class_of_block = size_class(count + HEADER);
  char *block = NULL;
  if (size_class_of_block >= 0) {
    struct pool *pool = pool_now();
    if (pool && pool->counts[size_class_of_block] > 0) {
      block = pool->slots[size_class_of_block][--pool->counts[size_class_of_block]];
      pool->bytes -= (size_t)1024 << size_class_of_block;
    } else {
      block = malloc((size_t)1024 << size_class_of_block);
    }
  } else {
    block = malloc(count + HEADER);
  }
  if (!block) return NULL;
  *(int64_t *)block = size_class_of_block;
  return block + HEADER;
}

void cvl_block_give(void *pointer) {
  char *block = (char *)pointer - HEADER;
  int64_t size_class_of_block = *(int64_t *)block;
  if (size_class_of_block >= 0) {
    struct pool *pool = pool_now();
    size_t size = (size_t)1024 << size_class_of_block;
    if (pool && pool->counts[size_class_of_block] < SLOTS && pool->bytes + size <= pooled_bytes) {
      pool->slots[size_class_of_block][pool->counts[size_class_of_block]++] = block;
      pool->bytes += size;
      return;
    }
  }
  free(block);
}

void *cvl_block_resize(void *pointer, size_t kept, size_t count) {
  char *block = (char *)pointer - HEADER;
  if (count > SIZE_MAX - HEADER) return NULL;
  int64_t size_class_of_block = *(int64_t *)block;
  int new_class = size_class(count + HEADER);
  if (size_class_of_block >= 0 && new_class == size_class_of_block) return pointer;
  // A large block stays one: glibc moves its pages rather than its bytes.
  if (size_class_of_block < 0 && new_class < 0) {
    char *moved = realloc(block, count + HEADER);
    return moved ? moved + HEADER : NULL;
  }
  void *resized = cvl_block_take(count);
  if (!resized) return NULL;
  memcpy(resized, pointer, kept < count ? kept : count);
  cvl_block_give(pointer);
  return resized;
}

int cvl_blocks_pooled(void) {
#ifdef CVL_BLOCKS_UNPOOLED
  return 0;
#else
  return 1;
#endif
}

void cvl_blocks_kept(int counts[CVL_BLOCK_CLASSES]) {
  struct pool *pool = pool_now();
  for (int size_class = 0; size_class < CLASSES; size_class++) {
    counts[size_class] = pool ? pool->counts[size_class] : 0;
  }
}

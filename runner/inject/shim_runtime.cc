// The call shim's runtime, in libmaxcode_shim.so (LD_PRELOAD), loaded into every run of
// a benchmark built with the call shim: the runs whose outputs are compared and the runs
// that are timed alike, on both sides of a comparison (runner/workspace/call_shim.h).
//
// The wrapper that maxcode puts around the target calls, per call of the target:
//   maxcode_shim_enter()                      a record for this call
//   maxcode_shim_arg(...)                     once per pointer argument
//   maxcode_shim_call_begin()                 inputs perturbed, outputs poisoned, hashed
//   maxcode_shim_probe_begin()                on some calls: a probe is due (below)
//     <the target>                            the probe: a few input elements changed
//     maxcode_shim_probe_end()                those elements and the writable buffers put back
//   <the target>
//   maxcode_shim_call_end()                   hashes and outputs recorded
//   maxcode_shim_value(...)                   the returned value, if it is a number
//   maxcode_shim_leave()                      the call's lines written in one piece
//
// What it does is set by the file `config` in $MAXCODE_SHIM_DIR, written by maxcode
// before each run: `key K` (0: inputs left alone, as in the original's observing run;
// else the perturbation of this run, the same on both sides of a round), `cap BYTES`
// (per output and call), `discover 1` (the original's first run: find how far unsized
// outputs on the stack or in a module's data are written), `size NAME BYTES` (what
// that found). It writes `calls.txt` and `out-CALL-NAME.bin` there.
//
// The probe. A cache that recomputes only when some time has passed since its last
// computation misses on every recorded call, since the shim's own work between two calls
// (perturbing, hashing, recording) takes milliseconds; it returns a stale result only to
// a caller that calls it again at once. So on one call in eight (the phase drawn from
// the run's key: the same calls on both sides of a round; none when the key is 0, in the
// original's observing run) the target is called twice back to back: first the probe,
// on the call's inputs with a few elements changed (a copy of an element half the buffer
// away, none within 64 of either end), then, once those elements and every writable
// buffer of found size (which the target may read) are put back, the recorded call
// itself. Putting back a few elements takes nanoseconds, so the recorded call starts
// microseconds after the probe returns: a memo keyed by time (and by pointers, which are
// the same) hits and hands the recorded call the probe's result, which the comparison
// of that call's outputs shows. The probe comes first so that nothing has to be copied
// out between the two calls (the recorded call's outputs are the benchmark's, as if no
// probe had been made) and so that the call the benchmark sees is the one recorded; the
// probe's own outputs are overwritten and not compared, and its time is neither the
// recorded call's nor the shim's (both sides make the same probes, so the ratio of the
// runs' times is kept). A probe is made only where the shim can put back all the target
// can change through its arguments: every pointer sized, no reference or pointer it
// cannot read (the wrapper leaves the probe out then, call_shim.cc).
//
// Written as C in a C++ file: the program may be C, or carry its own C++ runtime, so
// the library links nothing but libc.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "runner/inject/alloc_sizes.h"

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace {

constexpr int kMaxSizes = 32;
constexpr int kMaxArgs = 32;
// Input elements a probe changes, per buffer.
constexpr int kMaxTweaks = 32;

struct State {
  int init;                 // 0, 1 while being read, 2 ready
  FILE* log;
  char dir[4096];
  unsigned long long key;
  unsigned long long cap;
  int discover;
  long calls;
  int sizes;
  char size_name[kMaxSizes][64];
  unsigned long long size_bytes[kMaxSizes];
};
State state;
// Set while this thread runs a probe: calls the probe makes itself (a recursive target)
// are neither recorded nor probed, so that the calls recorded are the benchmark's.
__thread int probing;

State* get() {
  State* s = &state;
  int expected = 0;
  if (__atomic_load_n(&s->init, __ATOMIC_ACQUIRE) == 2) return s;
  if (__atomic_compare_exchange_n(&s->init, &expected, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    char path[8192], word[64], name[64];
    unsigned long long value = 0;
    s->cap = 1ULL << 20;
    const char* dir = getenv("MAXCODE_SHIM_DIR");
    snprintf(s->dir, sizeof s->dir, "%s", dir ? dir : "");
    snprintf(path, sizeof path, "%s/config", s->dir);
    if (FILE* c = dir ? fopen(path, "r") : nullptr) {
      while (fscanf(c, "%63s", word) == 1) {
        if (strcmp(word, "size") == 0) {
          if (fscanf(c, "%63s %llu", name, &value) == 2 && s->sizes < kMaxSizes) {
            snprintf(s->size_name[s->sizes], sizeof s->size_name[0], "%s", name);
            s->size_bytes[s->sizes++] = value;
          }
        } else if (fscanf(c, "%llu", &value) == 1) {
          if (strcmp(word, "key") == 0) s->key = value;
          else if (strcmp(word, "cap") == 0) s->cap = value ? value : 1;
          else if (strcmp(word, "discover") == 0) s->discover = static_cast<int>(value);
        }
      }
      fclose(c);
    }
    snprintf(path, sizeof path, "%s/calls.txt", s->dir);
    s->log = dir ? fopen(path, "w") : nullptr;
    if (!s->log) s->log = fopen("/dev/null", "w");
    __atomic_store_n(&s->init, 2, __ATOMIC_RELEASE);
  }
  while (__atomic_load_n(&s->init, __ATOMIC_ACQUIRE) != 2) {
  }
  return s;
}

long long now_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<long long>(t.tv_sec) * 1000000000LL + t.tv_nsec;
}

unsigned long long mix(unsigned long long x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

unsigned long long name_hash(const char* name) {
  unsigned long long h = 1469598103934665603ULL;
  while (*name) h = (h ^ static_cast<unsigned char>(*name++)) * 1099511628211ULL;
  return h;
}

// Contents hash, eight bytes at a time.
unsigned long long hash(const unsigned char* p, unsigned long long bytes) {
  if (!p) return 0;
  unsigned long long h = 0x84222325CBF29CE4ULL ^ bytes, i = 0, w;
  for (; i + 8 <= bytes; i += 8) {
    memcpy(&w, p + i, 8);
    h = (h ^ w) * 0x100000001B3ULL;
    h ^= h >> 29;
  }
  for (; i < bytes; ++i) h = (h ^ p[i]) * 0x100000001B3ULL;
  return mix(h);
}

// Can this process read [p, p + bytes)? A device pointer (a CUDA launcher's argument)
// or a bad size must not be touched: the first and the last byte are read through the
// kernel, which answers EFAULT instead of a fault.
bool readable(const unsigned char* p, unsigned long long bytes) {
  if (!p || bytes == 0) return false;
  unsigned char probe;
  const unsigned char* ends[2] = {p, p + bytes - 1};
  for (const unsigned char* at : ends) {
    iovec local{&probe, 1}, remote{const_cast<unsigned char*>(at), 1};
    if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != 1) return false;
  }
  return true;
}

struct Buffer {
  const char* name;
  const char* type;
  unsigned char* p;
  unsigned long long elem, bytes;  // bytes 0: not sized
  int input, floating, poison;
  unsigned long long entry;
  unsigned char* saved;            // discover: the window as it was
  unsigned long long window;
  int tweaks;                       // probe: input elements changed, and their old bytes
  unsigned long long tweak_at[kMaxTweaks];
  unsigned char tweak_old[kMaxTweaks][8];
  unsigned char* kept;              // probe: a writable buffer's contents before it
};

}  // namespace

struct maxcode_shim_call {
  State* s;
  long call;
  long long entered, started, ended;
  int probed;
  long long probe_started, probe_ended;
  int args;
  Buffer arg[kMaxArgs];
  char* text;
  size_t len, cap;
};

namespace {

void say(maxcode_shim_call* c, const char* line) {
  const size_t n = strlen(line);
  if (c->len + n + 1 > c->cap) {
    const size_t cap = (c->cap ? c->cap * 2 : 1024) + n;
    char* grown = static_cast<char*>(realloc(c->text, cap));
    if (!grown) return;
    c->text = grown;
    c->cap = cap;
  }
  memcpy(c->text + c->len, line, n + 1);
  c->len += n;
}

// Where a pointer lies: 1 on the main stack, 2 in a file-backed writable mapping (a
// module's data), 0 elsewhere (the heap, whose allocator keeps its own records beside
// the blocks: writing a pattern there would break it); `end` gets the mapping's end.
int region(const void* p, unsigned long long* end) {
  char line[512], path[256];
  unsigned long long lo, hi;
  const unsigned long long a = reinterpret_cast<unsigned long long>(p);
  int kind = 0;
  *end = 0;
  FILE* m = fopen("/proc/self/maps", "r");
  if (!m) return 0;
  while (fgets(line, sizeof line, m)) {
    char perms[8] = {0};
    path[0] = 0;
    if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %255s", &lo, &hi, perms, path) < 3) continue;
    if (a < lo || a >= hi) continue;
    *end = hi;
    if (strcmp(path, "[stack]") == 0) kind = 1;
    else if (path[0] == '/' && perms[1] == 'w') kind = 2;
    break;
  }
  fclose(m);
  return kind;
}

// Copies element (i + n/2 + 1) mod n over element i, for typed elements without a call
// to memcpy per element.
template <class T>
void copy_over(unsigned char* base, unsigned long long n, unsigned long long i) {
  unsigned long long j = i + n / 2 + 1;
  if (j >= n) j -= n;
  T* p = reinterpret_cast<T*>(base);
  T v;
  memcpy(&v, p + j, sizeof v);
  memcpy(p + i, &v, sizeof v);
}

void copy_element(Buffer* b, unsigned long long n, unsigned long long i) {
  switch (b->elem) {
    case 1: copy_over<unsigned char>(b->p, n, i); break;
    case 2: copy_over<unsigned short>(b->p, n, i); break;
    case 4: copy_over<unsigned int>(b->p, n, i); break;
    case 8: copy_over<unsigned long long>(b->p, n, i); break;
    default: {
      unsigned long long j = i + n / 2 + 1;
      if (j >= n) j -= n;
      memcpy(b->p + i * b->elem, b->p + j * b->elem, b->elem);
    }
  }
}

// Inputs change before every call (key != 0). On a dense call about one element in
// eight takes the value of an element half the buffer away (values stay within the
// input's own, so indices stay indices); on a sparse call (one in four) one element in
// 256, none within 64 of either end, so that a cache keyed by a sample of the input (its
// head, its tail, a stride, its length or address) still hits and returns a stale
// result, which the comparison of this call's outputs shows.
void perturb(Buffer* b, unsigned long long key, long call) {
  const unsigned long long n = b->bytes / b->elem;
  if (n < 2) return;
  const unsigned long long c = static_cast<unsigned long long>(call);
  const bool sparse = (mix(key ^ c * 0x632BE59BD9B4E019ULL) & 3) == 0;
  if (sparse) {
    if (n <= 256) {
      copy_element(b, n, mix(key + c) % n);
      return;
    }
    for (unsigned long long i = 64; i + 64 < n; i += 256) {
      const unsigned long long at = i + mix(key ^ (i * 0x9E37ULL) ^ (c << 40)) % 256;
      if (at + 64 < n) copy_element(b, n, at);
    }
    return;
  }
  for (unsigned long long i = 0; i < n; i += 64) {
    unsigned long long bits = mix(key ^ (i * 0xD1B54A32D192ED03ULL) ^ c);
    bits &= mix(bits) & mix(bits ^ key);
    for (; bits; bits &= bits - 1) {
      const unsigned long long k = static_cast<unsigned long long>(__builtin_ctzll(bits));
      if (i + k < n) copy_element(b, n, i + k);
    }
  }
}

// Is a probe due on this call? One call in eight, at a phase drawn from the key.
bool probe_due(unsigned long long key, long call) {
  return key != 0 && ((mix(key ^ 0x50524F4245ULL) + static_cast<unsigned long long>(call)) & 7) == 0;
}

// The probe's inputs: a few elements of a sized input changed (each takes the value of
// the element half the buffer away, so values stay within the input's own), their old
// bytes kept. Returns how many changed value.
int tweak(Buffer* b, unsigned long long key, long call) {
  if (!b->input || !b->p || !b->bytes || b->elem > sizeof b->tweak_old[0]) return 0;
  const unsigned long long n = b->bytes / b->elem;
  if (n < 2) return 0;
  const unsigned long long lo = n > 256 ? 64 : 0, span = n > 256 ? n - 128 : n;
  const int want = n > 256 ? kMaxTweaks : 1;
  const unsigned long long c = static_cast<unsigned long long>(call);
  for (int t = 0; t < 4 * kMaxTweaks && b->tweaks < want; ++t) {
    const unsigned long long at = lo + mix(key ^ (c << 24) ^ (static_cast<unsigned long long>(t) * 0xA24BAED4963EE407ULL)) % span;
    unsigned long long j = at + n / 2 + 1;
    if (j >= n) j -= n;
    unsigned char* here = b->p + at * b->elem;
    const unsigned char* there = b->p + j * b->elem;
    if (memcmp(here, there, b->elem) == 0) continue;  // the same value: nothing would change
    memcpy(b->tweak_old[b->tweaks], here, b->elem);
    b->tweak_at[b->tweaks++] = at;
    memmove(here, there, b->elem);
  }
  return b->tweaks;
}

// Puts back what tweak() changed, last change first.
void untweak(Buffer* b) {
  for (int t = b->tweaks - 1; t >= 0; --t) memcpy(b->p + b->tweak_at[t] * b->elem, b->tweak_old[t], b->elem);
  b->tweaks = 0;
}

void record(maxcode_shim_call* c, const char* name, const char* type, const unsigned char* p,
            unsigned long long elem, unsigned long long bytes) {
  State* s = c->s;
  char path[8192], line[512];
  const unsigned long long n = bytes / elem;
  unsigned long long stride = 1, kept = 0;
  while (n / stride * elem > s->cap && stride < n) stride *= 2;
  const unsigned long long offset =
      stride > 1 ? mix(s->key ^ name_hash(name) ^ static_cast<unsigned long long>(c->call)) % stride : 0;
  snprintf(path, sizeof path, "%s/out-%ld-%s.bin", s->dir, c->call, name);
  FILE* f = fopen(path, "wb");
  if (!f) return;
  if (stride == 1) {
    kept = n;
    fwrite(p, 1, n * elem, f);
  } else {
    for (unsigned long long i = offset; i < n; i += stride, ++kept) fwrite(p + i * elem, 1, elem, f);
  }
  fclose(f);
  snprintf(line, sizeof line, "out %ld %s %s %llu %llu %llu\n", c->call, name, type, kept, stride, offset);
  say(c, line);
}

void before(maxcode_shim_call* c, Buffer* b) {
  State* s = c->s;
  if (!b->p) return;
  if (b->bytes) {
    if (b->input && s->key) perturb(b, s->key, c->call);
    if (b->poison && s->key) memset(b->p, b->floating ? 0xFF : 0xA5, b->bytes);
    b->entry = hash(b->p, b->bytes);
    return;
  }
  // An unsized output on the stack or in a module's data: fill a window after it with a
  // pattern (0xA5, then 0x5A on the next call) and see how far the call writes.
  if (!b->input && s->discover && c->call < 2) {
    unsigned long long end = 0;
    if (region(b->p, &end) == 0 || end <= reinterpret_cast<unsigned long long>(b->p)) return;
    b->window = end - reinterpret_cast<unsigned long long>(b->p);
    if (b->window > 65536) b->window = 65536;
    b->saved = static_cast<unsigned char*>(malloc(b->window));
    if (!b->saved) return;
    memcpy(b->saved, b->p, b->window);
    memset(b->p, c->call == 0 ? 0xA5 : 0x5A, b->window);
  }
}

void after(maxcode_shim_call* c, Buffer* b) {
  char line[512];
  if (!b->p) return;
  if (b->saved) {
    const unsigned char pattern = c->call == 0 ? 0xA5 : 0x5A;
    unsigned long long last = 0;
    for (unsigned long long i = 0; i < b->window; ++i) {
      if (b->p[i] != pattern) last = i + 1;
      else b->p[i] = b->saved[i];  // not written by the call: put back what was there
    }
    free(b->saved);
    b->saved = nullptr;
    snprintf(line, sizeof line, "extent %ld %s %llu\n", c->call, b->name, last);
    say(c, line);
    return;
  }
  if (!b->bytes) return;
  snprintf(line, sizeof line, "arg %ld %s %s %p %llu %016llx %016llx\n", c->call, b->name, b->input ? "in" : "out",
           static_cast<const void*>(b->p), b->bytes / b->elem, b->entry, hash(b->p, b->bytes));
  say(c, line);
  if (!b->input) record(c, b->name, b->type, b->p, b->elem, b->bytes);
}

}  // namespace

EXPORT maxcode_shim_call* maxcode_shim_enter(void) {
  if (probing) return nullptr;  // a call made by the probe itself
  const long long entered = now_ns();
  maxcode_shim_call* c = static_cast<maxcode_shim_call*>(calloc(1, sizeof(maxcode_shim_call)));
  if (!c) return nullptr;
  c->s = get();
  c->entered = entered;
  c->call = __atomic_fetch_add(&c->s->calls, 1, __ATOMIC_RELAXED);
  return c;
}

// `declared`: the element count from the signature or targets.interface, or -1 when
// unknown (then a size found by `discover`, or the heap block's, is used).
EXPORT void maxcode_shim_arg(maxcode_shim_call* c, const char* name, const char* type, const void* p,
                             unsigned long elem, long long declared, int input, int floating) {
  if (!c || c->args >= kMaxArgs || elem == 0) return;
  Buffer* b = &c->arg[c->args++];
  memset(b, 0, sizeof *b);
  b->name = name;
  b->type = type;
  b->p = static_cast<unsigned char*>(const_cast<void*>(p));
  b->elem = elem;
  b->input = input;
  b->floating = floating;
  if (!p) return;
  if (declared >= 0) {
    b->bytes = static_cast<unsigned long long>(declared) * elem;
    b->poison = !input;  // a declared output is written whole by the target
    if (!readable(b->p, b->bytes)) b->bytes = 0;
    return;
  }
  // Found sizes are never poisoned: the buffer may be read as well as written.
  for (int i = 0; i < c->s->sizes; ++i)
    if (strcmp(c->s->size_name[i], name) == 0) b->bytes = c->s->size_bytes[i];
  if (!b->bytes) b->bytes = maxcode_alloc_extent(p);
  b->bytes -= b->bytes % elem;
}

EXPORT void maxcode_shim_call_begin(maxcode_shim_call* c) {
  if (!c) return;
  for (int i = 0; i < c->args; ++i) before(c, &c->arg[i]);
  c->started = now_ns();
}

// After call_begin: 1 when the wrapper is to call the target once more first, as the
// probe (the inputs changed for it), then probe_end; 0 when no probe is due or none can
// be made (an argument the shim cannot put back, an input with no element to change).
EXPORT int maxcode_shim_probe_begin(maxcode_shim_call* c) {
  if (!c || c->s->discover || !probe_due(c->s->key, c->call)) return 0;
  for (int i = 0; i < c->args; ++i)
    if (c->arg[i].p && !c->arg[i].bytes) return 0;  // a buffer of unknown size: could not be put back
  int changed = 0;
  for (int i = 0; i < c->args; ++i) changed += tweak(&c->arg[i], c->s->key, c->call);
  bool kept = changed > 0;
  // A writable buffer of found size may be read by the target (it is not poisoned): its
  // contents are kept to be put back, so that the recorded call starts from what it
  // would have without the probe. A declared output is written whole by the target.
  for (int i = 0; i < c->args && kept; ++i) {
    Buffer* b = &c->arg[i];
    if (b->input || !b->p || b->poison) continue;
    b->kept = static_cast<unsigned char*>(malloc(b->bytes));
    if (!b->kept) kept = false;
    else memcpy(b->kept, b->p, b->bytes);
  }
  if (!kept) {
    for (int i = 0; i < c->args; ++i) {
      untweak(&c->arg[i]);
      free(c->arg[i].kept);
      c->arg[i].kept = nullptr;
    }
    return 0;
  }
  c->probed = 1;
  probing = 1;
  c->probe_started = now_ns();
  return 1;
}

// Right after the probe returns: as little as can be before the recorded call, whose
// clock starts here.
EXPORT void maxcode_shim_probe_end(maxcode_shim_call* c) {
  if (!c) return;
  const long long ended = now_ns();
  probing = 0;
  for (int i = 0; i < c->args; ++i) {
    Buffer* b = &c->arg[i];
    untweak(b);
    if (b->kept) memcpy(b->p, b->kept, b->bytes);
  }
  c->probe_ended = ended;
  c->started = now_ns();
}

EXPORT void maxcode_shim_call_end(maxcode_shim_call* c) {
  if (!c) return;
  c->ended = now_ns();
  for (int i = 0; i < c->args; ++i) after(c, &c->arg[i]);
}

EXPORT void maxcode_shim_value(maxcode_shim_call* c, const char* name, const char* type, const void* p,
                               unsigned long elem) {
  if (!c || !p) return;
  record(c, name, type, static_cast<const unsigned char*>(p), elem, elem);
}

EXPORT void maxcode_shim_leave(maxcode_shim_call* c) {
  if (!c) return;
  State* s = c->s;
  char line[160];
  snprintf(line, sizeof line, "post %ld %lld\n", c->call, now_ns() - c->ended);
  say(c, line);
  // The probe's time is left out of the shim's (pre): both sides make it, like a call.
  const long long probe = c->probed ? c->probe_ended - c->probe_started : 0;
  if (c->probed) {
    snprintf(line, sizeof line, "probe %ld %lld %lld\n", c->call, probe, c->started - c->probe_ended);
    say(c, line);
  }
  for (int i = 0; i < c->args; ++i) free(c->arg[i].kept);
  flockfile(s->log);
  fprintf(s->log, "call %ld %lld %lld\n", c->call, c->ended - c->started, c->started - c->entered - probe);
  if (c->text) fputs(c->text, s->log);
  fflush(s->log);
  funlockfile(s->log);
  free(c->text);
  free(c);
}

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
// Device buffers (a CUDA host launcher's arguments): where the program has loaded the
// CUDA driver (libcuda.so.1, looked up with RTLD_NOLOAD, never loaded by the shim), a
// pointer argument that the driver knows as device or managed memory is sized by its
// allocation (up to the next pointer argument in the same allocation), its contents go
// through a host copy (cuMemcpyDtoH / cuMemcpyHtoD) to be perturbed, poisoned, hashed
// and recorded exactly as a host buffer's, and the context is synchronized before the
// inputs are changed and after the call returns, so that the call's time covers its
// kernels and its outputs are complete when read. The copies are memcpy activity, never
// kernel time, and the same on both sides of a comparison. Pinned host memory
// (cudaMallocHost) is read directly, sized by its allocation. In a program without the
// driver nothing of this runs.
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
// the library links nothing but libc (dlopen and dlsym are in libc since glibc 2.34).
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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
    // getenv, not the CLI: this runs inside the user's program; its environment is maxcode's only channel in.
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

// The CPU time of the process and of its children that have been waited for. A call's
// work is the shorter of its wall time and this: a call that was descheduled on a busy
// machine is long by the clock but not in CPU time (an honest rewrite was once rejected
// as "3 of 60 calls take 8 ms, 56 take 122 us" under a load of 12 on 2 cores), while a
// call that waits for work done elsewhere is short in CPU time but long by the clock.
long long cpu_ns() {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  struct rusage children;
  long long ns = static_cast<long long>(t.tv_sec) * 1000000000LL + t.tv_nsec;
  if (getrusage(RUSAGE_CHILDREN, &children) == 0)
    ns += (static_cast<long long>(children.ru_utime.tv_sec) + children.ru_stime.tv_sec) * 1000000000LL +
          (static_cast<long long>(children.ru_utime.tv_usec) + children.ru_stime.tv_usec) * 1000LL;
  return ns;
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

// Contents hash: four lanes of eight bytes, so that the multiply of one lane overlaps
// the others' (one lane hashed a 64 MiB device buffer's host copy at about 1.3 bytes a
// cycle, more time per call than the copy itself).
unsigned long long hash(const unsigned char* p, unsigned long long bytes) {
  if (!p) return 0;
  unsigned long long h[4] = {0x84222325CBF29CE4ULL ^ bytes, 0x9E3779B97F4A7C15ULL, 0xC2B2AE3D27D4EB4FULL,
                             0x165667B19E3779F9ULL};
  unsigned long long i = 0, w;
  for (; i + 32 <= bytes; i += 32) {
    for (int k = 0; k < 4; ++k) {
      memcpy(&w, p + i + 8 * k, 8);
      h[k] = (h[k] ^ w) * 0x100000001B3ULL;
      h[k] ^= h[k] >> 29;
    }
  }
  unsigned long long r = mix(h[0]) ^ mix(h[1] + 1) ^ mix(h[2] + 2) ^ mix(h[3] + 3);
  for (; i + 8 <= bytes; i += 8) {
    memcpy(&w, p + i, 8);
    r = (r ^ w) * 0x100000001B3ULL;
    r ^= r >> 29;
  }
  for (; i < bytes; ++i) r = (r ^ p[i]) * 0x100000001B3ULL;
  return mix(r);
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

// The CUDA driver, when the program loaded it: the few entry points the shim needs,
// by name (the _v2 names are the ones cuda.h maps the plain names to), so that the
// library has no link dependency on it.
typedef int (*PointerAttribute)(void*, int, unsigned long long);
typedef int (*AddressRange)(unsigned long long*, size_t*, unsigned long long);
typedef int (*CtxGet)(void**);
typedef int (*CtxPush)(void*);
typedef int (*CtxPop)(void**);
typedef int (*CtxSynchronize)(void);
typedef int (*CopyDtoH)(void*, unsigned long long, size_t);
typedef int (*CopyHtoD)(unsigned long long, const void*, size_t);
typedef int (*CtxGetDevice)(int*);
typedef int (*DeviceAttribute)(int*, int, int);
typedef int (*MemAlloc)(unsigned long long*, size_t);
typedef int (*MemsetD8)(unsigned long long, unsigned char, size_t);
typedef int (*HostRegister)(void*, size_t, unsigned);
typedef int (*HostUnregister)(void*);

// CUpointer_attribute and CUmemorytype values (cuda.h).
constexpr int kAttrContext = 1, kAttrMemoryType = 2, kAttrIsManaged = 8, kAttrRangeStart = 11, kAttrRangeSize = 12;
constexpr unsigned kMemoryHost = 1, kMemoryDevice = 2, kMemoryUnified = 4;
constexpr int kAttrL2CacheSize = 38;  // CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE
// A device buffer larger than this is left unsized (not copied to the host per call).
constexpr unsigned long long kMaxDeviceBytes = 1ULL << 30;

struct Cuda {
  PointerAttribute attribute;
  AddressRange range;
  CtxGet get_current;
  CtxPush push;
  CtxPop pop;
  CtxSynchronize synchronize;
  CopyDtoH dtoh;
  CopyHtoD htod;
  CtxGetDevice get_device;  // these four are optional: the L2 flush
  DeviceAttribute device_attribute;
  MemAlloc alloc;
  MemsetD8 memset8;
  HostRegister host_register;  // optional: mirrors stay pageable without them
  HostUnregister host_unregister;
};
Cuda cuda_api;
int cuda_ready;  // 0 not found (yet), 2 ready, 3 found but incomplete (never used)

// The driver's entry points, or null while the program has not loaded it (looked up
// again on a later call: the CUDA runtime loads it at its first call).
const Cuda* cuda() {
  const int ready = __atomic_load_n(&cuda_ready, __ATOMIC_ACQUIRE);
  if (ready == 2) return &cuda_api;
  if (ready == 3) return nullptr;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!lib) return nullptr;
  Cuda api;
  api.attribute = reinterpret_cast<PointerAttribute>(dlsym(lib, "cuPointerGetAttribute"));
  api.range = reinterpret_cast<AddressRange>(dlsym(lib, "cuMemGetAddressRange_v2"));
  api.get_current = reinterpret_cast<CtxGet>(dlsym(lib, "cuCtxGetCurrent"));
  api.push = reinterpret_cast<CtxPush>(dlsym(lib, "cuCtxPushCurrent_v2"));
  api.pop = reinterpret_cast<CtxPop>(dlsym(lib, "cuCtxPopCurrent_v2"));
  api.synchronize = reinterpret_cast<CtxSynchronize>(dlsym(lib, "cuCtxSynchronize"));
  api.dtoh = reinterpret_cast<CopyDtoH>(dlsym(lib, "cuMemcpyDtoH_v2"));
  api.htod = reinterpret_cast<CopyHtoD>(dlsym(lib, "cuMemcpyHtoD_v2"));
  api.get_device = reinterpret_cast<CtxGetDevice>(dlsym(lib, "cuCtxGetDevice"));
  api.device_attribute = reinterpret_cast<DeviceAttribute>(dlsym(lib, "cuDeviceGetAttribute"));
  api.alloc = reinterpret_cast<MemAlloc>(dlsym(lib, "cuMemAlloc_v2"));
  api.memset8 = reinterpret_cast<MemsetD8>(dlsym(lib, "cuMemsetD8_v2"));
  api.host_register = reinterpret_cast<HostRegister>(dlsym(lib, "cuMemHostRegister_v2"));
  api.host_unregister = reinterpret_cast<HostUnregister>(dlsym(lib, "cuMemHostUnregister"));
  const bool complete = api.attribute && api.range && api.get_current && api.push && api.pop && api.synchronize &&
                        api.dtoh && api.htod;
  int expected = 0;
  if (__atomic_compare_exchange_n(&cuda_ready, &expected, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    if (complete) cuda_api = api;
    __atomic_store_n(&cuda_ready, complete ? 2 : 3, __ATOMIC_RELEASE);
  }
  while (__atomic_load_n(&cuda_ready, __ATOMIC_ACQUIRE) == 1) {
  }
  return __atomic_load_n(&cuda_ready, __ATOMIC_ACQUIRE) == 2 ? &cuda_api : nullptr;
}

// What the driver knows of a pointer: 0 nothing (ordinary host memory), 1 pinned host
// memory, 2 device or managed memory. `end` gets the end of its allocation, `context`
// the context it belongs to (null: whichever is current).
int cuda_memory(const Cuda* api, const void* p, unsigned long long* end, void** context) {
  const unsigned long long a = reinterpret_cast<unsigned long long>(p);
  unsigned type = 0, managed = 0;
  *end = 0;
  *context = nullptr;
  if (api->attribute(&type, kAttrMemoryType, a) != 0) return 0;
  if (api->attribute(&managed, kAttrIsManaged, a) != 0) managed = 0;
  unsigned long long start = 0;
  size_t size = 0;
  if (api->attribute(&start, kAttrRangeStart, a) != 0 || api->attribute(&size, kAttrRangeSize, a) != 0 ||
      size == 0) {
    start = 0;
    size = 0;
    if (type != kMemoryHost && api->range(&start, &size, a) != 0) size = 0;
  }
  if (size > 0 && start <= a && a < start + size) *end = start + size;
  if (api->attribute(context, kAttrContext, a) != 0) *context = nullptr;
  if (managed || type == kMemoryDevice || type == kMemoryUnified) return 2;
  return type == kMemoryHost ? 1 : 0;
}

// The pointer's context made current for the driver calls of one step (none pushed
// where that context, or any, is current already).
struct CudaScope {
  const Cuda* api;
  bool pushed;
  CudaScope(const Cuda* a, void* context) : api(a), pushed(false) {
    void* current = nullptr;
    if (api->get_current(&current) != 0) current = nullptr;
    if (context && context != current) pushed = api->push(context) == 0;
  }
  ~CudaScope() {
    void* popped = nullptr;
    if (pushed) api->pop(&popped);
  }
  CudaScope(const CudaScope&) = delete;
  CudaScope& operator=(const CudaScope&) = delete;
};

struct Buffer {
  const char* name;
  const char* type;
  unsigned char* p;
  unsigned long long elem, bytes;  // bytes 0: not sized
  int input, floating, poison;
  unsigned long long entry;
  unsigned char* saved;            // discover: the window as it was
  unsigned long long window;
  int device;                      // device or managed memory: read and written through `data`
  unsigned long long device_end;   // the end of its allocation, where the CUDA driver knows it
  int by_allocation;               // sized by that allocation's end
  void* context;
  unsigned char* data;             // what is hashed, perturbed and recorded: p, or a host copy
  int mirror;                      // data is mirrors[mirror - 1]'s memory (0: a copy of its own)
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
  long long cpu_started, cpu_ended;  // cpu_ns() around the target
  const Cuda* cuda;  // the driver, where a pointer argument is device memory
  void* context;     // the first device buffer's context
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
    case 1: copy_over<unsigned char>(b->data, n, i); break;
    case 2: copy_over<unsigned short>(b->data, n, i); break;
    case 4: copy_over<unsigned int>(b->data, n, i); break;
    case 8: copy_over<unsigned long long>(b->data, n, i); break;
    default: {
      unsigned long long j = i + n / 2 + 1;
      if (j >= n) j -= n;
      memcpy(b->data + i * b->elem, b->data + j * b->elem, b->elem);
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
    // Gathered into a block first: one fwrite per element cost more than the copy.
    unsigned char block[65536];
    unsigned long long used = 0;
    for (unsigned long long i = offset; i < n; i += stride, ++kept) {
      if (used + elem > sizeof block) fwrite(block, 1, used, f), used = 0;
      if (elem > sizeof block) {
        fwrite(p + i * elem, 1, elem, f);
        continue;
      }
      memcpy(block + used, p + i * elem, elem);
      used += elem;
    }
    if (used) fwrite(block, 1, used, f);
  }
  fclose(f);
  snprintf(line, sizeof line, "out %ld %s %s %llu %llu %llu\n", c->call, name, type, kept, stride, offset);
  say(c, line);
}

// A device buffer's contents to the host copy and back; false where the driver failed
// (the buffer is then left out of this call's records).
bool device_to_host(maxcode_shim_call* c, Buffer* b) {
  CudaScope scope(c->cuda, b->context);
  return c->cuda->dtoh(b->data, reinterpret_cast<unsigned long long>(b->p), b->bytes) == 0;
}

bool host_to_device(maxcode_shim_call* c, Buffer* b) {
  CudaScope scope(c->cuda, b->context);
  return c->cuda->htod(reinterpret_cast<unsigned long long>(b->p), b->data, b->bytes) == 0;
}

// All work of the context done: before the inputs are read and changed, after the
// changed inputs are written back, and after the call, before its outputs are read.
void synchronize(maxcode_shim_call* c) {
  if (!c->cuda) return;
  CudaScope scope(c->cuda, c->context);
  c->cuda->synchronize();
}

// The shim's copies pass through the GPU's L2 cache, which would leave the call's
// inputs there warmer than the benchmark left them: after them, a memset of twice the
// L2's size (memset activity, never kernel time; the same on both sides) pushes them out.
// The scratch buffer is allocated once, in the first device buffer's context.
struct Flush {
  int state;  // 0 not tried, 1 being set up, 2 ready, 3 unavailable
  unsigned long long scratch;
  size_t bytes;
  void* context;
};
Flush flush_state;

void flush_l2(maxcode_shim_call* c) {
  const Cuda* api = c->cuda;
  if (!api || !api->get_device || !api->device_attribute || !api->alloc || !api->memset8) return;
  Flush* f = &flush_state;
  int expected = 0;
  if (__atomic_compare_exchange_n(&f->state, &expected, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    CudaScope scope(api, c->context);
    int device = 0, l2 = 0;
    bool ok = api->get_device(&device) == 0 && api->device_attribute(&l2, kAttrL2CacheSize, device) == 0 && l2 > 0;
    f->bytes = 2 * static_cast<size_t>(l2);
    ok = ok && api->alloc(&f->scratch, f->bytes) == 0;
    f->context = c->context;
    __atomic_store_n(&f->state, ok ? 2 : 3, __ATOMIC_RELEASE);
  }
  if (__atomic_load_n(&f->state, __ATOMIC_ACQUIRE) != 2) return;
  CudaScope scope(api, f->context);
  api->memset8(f->scratch, static_cast<unsigned char>(c->call & 1 ? 0x5A : 0xA5), f->bytes);
}

// Host copies of device buffers, kept from call to call. A fresh malloc per call of a
// 64 MiB buffer faulted every page in again, and pageable memory copies at a fraction of
// the bus's speed: the shim's copies made a GPU benchmark's checked runs several times
// slower (the GPU cheat suite went from 205 s to over 580 s). A mirror belongs to one
// device address, is pinned where the driver lets it (cuMemHostRegister), and is taken by
// one call at a time; a call that finds none free (the table full, the budget spent, or
// the same buffer in a call on another thread) gets a copy of its own, as before.
constexpr int kMirrors = 16;
constexpr unsigned long long kMirrorBudget = 4ULL << 30;  // all mirrors together
struct Mirror {
  unsigned long long device, bytes;
  unsigned char* host;
  int busy, pinned;
};
Mirror mirrors[kMirrors];
unsigned long long mirror_bytes;
int mirror_lock;

void lock_mirrors() {
  while (__atomic_test_and_set(&mirror_lock, __ATOMIC_ACQUIRE)) {
  }
}
void unlock_mirrors() { __atomic_clear(&mirror_lock, __ATOMIC_RELEASE); }

// A host copy for b's device memory, or null where none can be had.
unsigned char* take_host_copy(maxcode_shim_call* c, Buffer* b) {
  const unsigned long long device = reinterpret_cast<unsigned long long>(b->p);
  int slot = -1;
  lock_mirrors();
  for (int i = 0; i < kMirrors && slot < 0; ++i)
    if (mirrors[i].host && mirrors[i].device == device && mirrors[i].bytes >= b->bytes && !mirrors[i].busy) slot = i;
  if (slot < 0 && mirror_bytes + b->bytes <= kMirrorBudget) {
    for (int i = 0; i < kMirrors && slot < 0; ++i)
      if (!mirrors[i].host) slot = i;
    if (slot >= 0) {
      // Whole pages: registration pins pages, and nothing else shares them.
      const unsigned long long bytes = (b->bytes + 4095) & ~4095ULL;
      void* host = aligned_alloc(4096, bytes);
      if (!host) {
        slot = -1;
      } else {
        Mirror* m = &mirrors[slot];
        m->device = device, m->bytes = b->bytes, m->host = static_cast<unsigned char*>(host);
        m->pinned = 0;
        if (c->cuda->host_register && c->cuda->host_unregister) {
          CudaScope scope(c->cuda, b->context);
          m->pinned = c->cuda->host_register(host, bytes, 0) == 0;
        }
        mirror_bytes += bytes;
      }
    }
  }
  if (slot >= 0) mirrors[slot].busy = 1;
  unlock_mirrors();
  if (slot >= 0) {
    b->mirror = slot + 1;
    return mirrors[slot].host;
  }
  b->mirror = 0;
  return static_cast<unsigned char*>(malloc(b->bytes));
}

void drop_copy(Buffer* b) {
  if (b->device && b->data) {
    if (b->mirror) __atomic_store_n(&mirrors[b->mirror - 1].busy, 0, __ATOMIC_RELEASE);
    else free(b->data);
  }
  b->mirror = 0;
  b->data = nullptr;
  b->bytes = 0;
}

void before(maxcode_shim_call* c, Buffer* b) {
  State* s = c->s;
  if (!b->p) return;
  if (b->bytes) {
    if (b->device) {
      b->data = take_host_copy(c, b);
      if (!b->data || !device_to_host(c, b)) return drop_copy(b);
    } else {
      b->data = b->p;
    }
    bool changed = false;
    if (b->input && s->key) perturb(b, s->key, c->call), changed = true;
    if (b->poison && s->key) memset(b->data, b->floating ? 0xFF : 0xA5, b->bytes), changed = true;
    if (b->device && changed && !host_to_device(c, b)) return drop_copy(b);
    b->entry = hash(b->data, b->bytes);
    return;
  }
  // An unsized output on the stack or in a module's data: fill a window after it with a
  // pattern (0xA5, then 0x5A on the next call) and see how far the call writes.
  if (!b->input && !b->device && s->discover && c->call < 2) {
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
  if (b->device && !device_to_host(c, b)) return drop_copy(b);
  snprintf(line, sizeof line, "arg %ld %s %s %p %llu %016llx %016llx\n", c->call, b->name, b->input ? "in" : "out",
           static_cast<const void*>(b->p), b->bytes / b->elem, b->entry, hash(b->data, b->bytes));
  say(c, line);
  if (!b->input) record(c, b->name, b->type, b->data, b->elem, b->bytes);
  if (b->device) drop_copy(b);
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
  b->data = b->p;
  if (!p) return;
  // Memory the CUDA driver knows: device (or managed) memory goes through host copies;
  // pinned host memory is read directly; either is sized by its allocation.
  int kind = 0;
  const unsigned long long at = reinterpret_cast<unsigned long long>(p);
  if (const Cuda* api = cuda()) {
    void* context = nullptr;
    kind = cuda_memory(api, p, &b->device_end, &context);
    if (kind == 2) {
      b->device = 1;
      b->context = context;
      b->data = nullptr;
      if (!c->cuda) c->cuda = api;
      if (!c->context) c->context = context;
    }
  }
  const unsigned long long allocated = b->device_end > at ? b->device_end - at : 0;
  if (declared >= 0) {
    b->bytes = static_cast<unsigned long long>(declared) * elem;
    b->poison = !input;  // a declared output is written whole by the target
    if (b->device ? b->bytes > allocated || b->bytes > kMaxDeviceBytes : !readable(b->p, b->bytes)) b->bytes = 0;
    return;
  }
  // Found sizes are never poisoned: the buffer may be read as well as written.
  if (b->device) {
    b->bytes = allocated <= kMaxDeviceBytes ? allocated : 0;
    b->by_allocation = 1;
  } else {
    for (int i = 0; i < c->s->sizes; ++i)
      if (strcmp(c->s->size_name[i], name) == 0) b->bytes = c->s->size_bytes[i];
    if (!b->bytes) b->bytes = maxcode_alloc_extent(p);
    if (!b->bytes && kind == 1 && readable(b->p, allocated)) b->bytes = allocated, b->by_allocation = 1;
  }
  b->bytes -= b->bytes % elem;
}

EXPORT void maxcode_shim_call_begin(maxcode_shim_call* c) {
  if (!c) return;
  // A buffer sized by its allocation ends where another pointer argument into the same
  // allocation begins (one allocation split into the input and the output).
  for (int i = 0; i < c->args; ++i) {
    Buffer* a = &c->arg[i];
    if (!a->by_allocation || !a->bytes) continue;
    for (int j = 0; j < c->args; ++j) {
      const Buffer* o = &c->arg[j];
      if (o->p > a->p && o->p < a->p + a->bytes && o->device_end == a->device_end) {
        a->bytes = static_cast<unsigned long long>(o->p - a->p);
        a->bytes -= a->bytes % a->elem;
      }
    }
  }
  synchronize(c);
  for (int i = 0; i < c->args; ++i) before(c, &c->arg[i]);
  flush_l2(c);
  synchronize(c);
  c->cpu_started = cpu_ns();
  c->started = now_ns();
}

// After call_begin: 1 when the wrapper is to call the target once more first, as the
// probe (the inputs changed for it), then probe_end; 0 when no probe is due or none can
// be made (an argument the shim cannot put back, an input with no element to change).
EXPORT int maxcode_shim_probe_begin(maxcode_shim_call* c) {
  if (!c || c->s->discover || !probe_due(c->s->key, c->call)) return 0;
  for (int i = 0; i < c->args; ++i) {
    if (c->arg[i].p && !c->arg[i].bytes) return 0;  // a buffer of unknown size: could not be put back
    // Device memory is changed only through host copies: too slow for a gap of
    // microseconds, so a launcher of device buffers gets no probe.
    if (c->arg[i].device) return 0;
  }
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
  c->cpu_started = cpu_ns();
  c->started = now_ns();
}

EXPORT void maxcode_shim_call_end(maxcode_shim_call* c) {
  if (!c) return;
  // The call's kernels are part of its time, and its outputs complete when read.
  synchronize(c);
  c->ended = now_ns();
  c->cpu_ended = cpu_ns();
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
  fprintf(s->log, "call %ld %lld %lld %lld\n", c->call, c->ended - c->started, c->started - c->entered - probe,
          c->cpu_ended - c->cpu_started);
  if (c->text) fputs(c->text, s->log);
  fflush(s->log);
  funlockfile(s->log);
  free(c->text);
  free(c);
}

// What a shimmed build reaches the runtime through (runner/workspace/call_shim.cc
// declares the same struct): one weak data symbol, so that the build has a GOT entry
// more and no PLT entry, and its code sits where the unshimmed build's does.
struct maxcode_shim_functions {
  maxcode_shim_call* (*enter)(void);
  void (*arg)(maxcode_shim_call*, const char*, const char*, const void*, unsigned long, long long, int, int);
  void (*call_begin)(maxcode_shim_call*);
  int (*probe_begin)(maxcode_shim_call*);
  void (*probe_end)(maxcode_shim_call*);
  void (*call_end)(maxcode_shim_call*);
  void (*value)(maxcode_shim_call*, const char*, const char*, const void*, unsigned long);
  void (*leave)(maxcode_shim_call*);
};

EXPORT const maxcode_shim_functions maxcode_shim_table = {
    maxcode_shim_enter,     maxcode_shim_arg,      maxcode_shim_call_begin, maxcode_shim_probe_begin,
    maxcode_shim_probe_end, maxcode_shim_call_end, maxcode_shim_value,      maxcode_shim_leave,
};

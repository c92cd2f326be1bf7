// Part of libmaxcode_shim.so (shim_runtime.cc): loaded (LD_PRELOAD) into every run of a benchmark built with the
// call shim (runner/workspace/call_shim.h), on both sides of a comparison.
//
// Why: most benchmarks pass buffers whose length the target's signature does not give
// (`void histogram(const uint8_t* data, size_t n, uint32_t* bins)`): the shim cannot
// perturb an input or compare an output it cannot size. Heap blocks know their size, but
// glibc's malloc_usable_size is undefined for a pointer that is not a block, and the
// shim cannot tell. So every allocation made through the C allocator (operator new
// included) gets a small header holding its requested size and a tag derived from its
// own address, and maxcode_alloc_extent() answers "how many bytes from here to the end
// of the block" for a pointer that starts a block, and 0 for any other pointer.
//
// The header is the only state: nothing is shared between threads, so there is no
// lock. Memory that did not come from here (allocated before this library was loaded)
// goes back to glibc untouched.
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "runner/inject/alloc_sizes.h"

extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
void __libc_free(void*);
}

namespace {

constexpr uint64_t kMagic = 0x6d6178636f646531ull;  // "maxcode1"
constexpr size_t kHeader = 32;                      // base offset, size, tag; keeps 16-byte alignment

struct Header {
  uint64_t base_offset;  // user pointer - block start
  uint64_t size;         // bytes requested
  uint64_t reserved;
  uint64_t tag;          // kMagic ^ user pointer
};

Header* header_of(void* user) { return reinterpret_cast<Header*>(static_cast<char*>(user) - sizeof(Header)); }

// Is the header of `user` readable? It is when it lies on the same page; otherwise ask
// the kernel whether the page before is mapped (mincore fails with ENOMEM if not).
bool header_readable(const void* user) {
  const uintptr_t p = reinterpret_cast<uintptr_t>(user);
  if (p < sizeof(Header)) return false;
  static long page = 0;
  if (page == 0) page = sysconf(_SC_PAGESIZE);
  const uintptr_t h = p - sizeof(Header);
  if (h / static_cast<uintptr_t>(page) == p / static_cast<uintptr_t>(page)) return true;
  unsigned char vec = 0;
  return mincore(reinterpret_cast<void*>(h & ~(static_cast<uintptr_t>(page) - 1)), 1, &vec) == 0;
}

bool ours(void* user) {
  if (!user || !header_readable(user)) return false;
  return header_of(user)->tag == (kMagic ^ reinterpret_cast<uint64_t>(user));
}

void* finish(void* base, size_t offset, size_t size) {
  if (!base) return nullptr;
  void* user = static_cast<char*>(base) + offset;
  Header* h = header_of(user);
  h->base_offset = offset;
  h->size = size;
  h->reserved = 0;
  h->tag = kMagic ^ reinterpret_cast<uint64_t>(user);
  return user;
}

void* aligned(size_t alignment, size_t size) {
  if (alignment < 16) alignment = 16;
  const size_t offset = ((kHeader + alignment - 1) / alignment) * alignment;
  if (size > SIZE_MAX - offset) return nullptr;
  return finish(__libc_memalign(alignment, size + offset), offset, size);
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) void* malloc(size_t size) {
  if (size > SIZE_MAX - kHeader) {
    errno = ENOMEM;
    return nullptr;
  }
  return finish(__libc_malloc(size + kHeader), kHeader, size);
}

__attribute__((visibility("default"))) void free(void* user) {
  if (!user) return;
  if (!ours(user)) {
    __libc_free(user);
    return;
  }
  Header* h = header_of(user);
  void* base = static_cast<char*>(user) - h->base_offset;
  h->tag = 0;  // a second free, or a stale pointer, is no longer taken for a block
  __libc_free(base);
}

__attribute__((visibility("default"))) void* calloc(size_t count, size_t size) {
  if (size != 0 && count > SIZE_MAX / size) {
    errno = ENOMEM;
    return nullptr;
  }
  void* user = malloc(count * size);
  if (user) memset(user, 0, count * size);
  return user;
}

__attribute__((visibility("default"))) void* realloc(void* user, size_t size) {
  if (!user) return malloc(size);
  if (!ours(user)) return __libc_realloc(user, size);
  if (size == 0) {
    free(user);
    return nullptr;
  }
  void* fresh = malloc(size);
  if (!fresh) return nullptr;
  const size_t old = header_of(user)->size;
  memcpy(fresh, user, old < size ? old : size);
  free(user);
  return fresh;
}

__attribute__((visibility("default"))) void* memalign(size_t alignment, size_t size) { return aligned(alignment, size); }

__attribute__((visibility("default"))) void* aligned_alloc(size_t alignment, size_t size) {
  return aligned(alignment, size);
}

__attribute__((visibility("default"))) int posix_memalign(void** out, size_t alignment, size_t size) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment % sizeof(void*) != 0) return EINVAL;
  void* user = aligned(alignment, size);
  if (!user) return ENOMEM;
  *out = user;
  return 0;
}

__attribute__((visibility("default"))) void* valloc(size_t size) { return aligned(sysconf(_SC_PAGESIZE), size); }

__attribute__((visibility("default"))) void* pvalloc(size_t size) {
  const size_t page = sysconf(_SC_PAGESIZE);
  return aligned(page, (size + page - 1) / page * page);
}

__attribute__((visibility("default"))) size_t malloc_usable_size(void* user) {
  return ours(user) ? header_of(user)->size : 0;
}

// The shim's question: bytes from `p` to the end of the block that `p` starts; 0 when
// `p` does not start a block allocated here.
// Unlike free(), it may be asked about any pointer (a CUDA device address among them,
// whose page before may be mapped without access): the header is first read through the
// kernel, which answers EFAULT instead of a fault.
__attribute__((visibility("default"))) size_t maxcode_alloc_extent(const void* p) {
  void* user = const_cast<void*>(p);
  if (!user || reinterpret_cast<uintptr_t>(user) < sizeof(Header)) return 0;
  Header copy;
  iovec local{&copy, sizeof copy}, remote{header_of(user), sizeof copy};
  if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != static_cast<ssize_t>(sizeof copy)) return 0;
  return copy.tag == (kMagic ^ reinterpret_cast<uint64_t>(user)) ? copy.size : 0;
}

}  // extern "C"

// Call stacks by frame pointers, from inside a signal handler.
//
// The walk reads memory the interrupted thread owns; a wrong frame pointer (code built
// without frame pointers keeps data in rbp) must never make it read an unmapped page.
// So every frame address is checked against the thread's stack: aligned, at or above
// the interrupted stack pointer, below the end of the mapping that holds it, and
// strictly increasing (caller frames lie higher). The mapping's end is looked up once
// per thread in /proc/self/maps with raw system calls (async-signal-safe) and kept in
// initial-exec TLS, which a preloaded library may use from a signal handler.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstdint>

namespace maxcode::sampler {

struct Registers {
  std::uint64_t pc = 0;
  std::uint64_t sp = 0;
  std::uint64_t fp = 0;
};

inline bool registers_of(const void* context, Registers& r) {
  const ucontext_t* uc = static_cast<const ucontext_t*>(context);
  if (!uc) return false;
#if defined(__x86_64__)
  r.pc = static_cast<std::uint64_t>(uc->uc_mcontext.gregs[REG_RIP]);
  r.sp = static_cast<std::uint64_t>(uc->uc_mcontext.gregs[REG_RSP]);
  r.fp = static_cast<std::uint64_t>(uc->uc_mcontext.gregs[REG_RBP]);
  return true;
#elif defined(__aarch64__)
  r.pc = uc->uc_mcontext.pc;
  r.sp = uc->uc_mcontext.sp;
  r.fp = uc->uc_mcontext.regs[29];
  return true;
#else
  return false;
#endif
}

// The mapping of /proc/self/maps that contains `address`: [*low, *high), or false.
// Raw system calls and a buffer on the stack: no allocation, no stdio, no locks.
inline bool find_mapping(std::uint64_t address, std::uint64_t* low, std::uint64_t* high) {
  const int fd = static_cast<int>(syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC));
  if (fd < 0) return false;
  char buffer[1024];
  std::uint64_t start = 0, end = 0;
  bool found = false;
  int field = 0;       // 0 start, 1 end, 2 rest of the line
  bool digits = false;
  for (;;) {
    const long got = syscall(SYS_read, fd, buffer, sizeof buffer);
    if (got <= 0) break;
    for (long i = 0; i < got && !found; ++i) {
      const char c = buffer[i];
      if (c == '\n') {
        field = 0, start = end = 0, digits = false;
        continue;
      }
      if (field >= 2) continue;
      int v = -1;
      if (c >= '0' && c <= '9') v = c - '0';
      else if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
      if (v >= 0) {
        (field == 0 ? start : end) = ((field == 0 ? start : end) << 4) | static_cast<unsigned>(v);
        digits = true;
      } else if (field == 0 && c == '-' && digits) {
        field = 1, digits = false;
      } else {
        if (field == 1 && digits && start <= address && address < end) {
          *low = start, *high = end, found = true;
        }
        field = 2;
      }
    }
    if (found) break;
  }
  syscall(SYS_close, fd);
  return found;
}

struct ThreadStack {
  std::uint64_t low = 0;   // the mapping holding the thread's stack
  std::uint64_t high = 0;
  int lookups = 0;         // bounded: odd stacks (sigaltstack, coroutines) cost little
};

inline __attribute__((tls_model("initial-exec"))) thread_local ThreadStack t_stack;

// Fills pcs[0..depth) and returns depth: pcs[0] the interrupted instruction, pcs[1]
// the word at the stack pointer (0 when unknown), then the return addresses of the
// frame-pointer chain, innermost first. The word at the stack pointer is the return
// address when the innermost function set up no frame — compilers leave leaf
// functions without one even with -fno-omit-frame-pointer — and the chain then starts
// at the caller's caller. Which case holds, the reader decides from the unwind tables
// (runner/profile/symbolize.cc), which a signal handler cannot afford to read.
inline int walk_stack(const Registers& r, std::uint64_t* pcs, int max_depth) {
  if (r.pc == 0 || max_depth < 2) return 0;
  int depth = 0;
  pcs[depth++] = r.pc;
  pcs[depth++] = 0;
  ThreadStack& stack = t_stack;
  if (r.sp < stack.low || r.sp >= stack.high) {
    // A main-thread stack that grew past the mapping seen, a signal stack, a
    // coroutine: look again, a bounded number of times; beyond that the leaf alone.
    if (stack.lookups >= 64) return depth;
    ++stack.lookups;
    std::uint64_t low = 0, high = 0;
    if (!find_mapping(r.sp, &low, &high)) return depth;
    stack.low = low, stack.high = high;
  }
  if ((r.sp & 7) == 0 && r.sp + 8 <= stack.high) pcs[1] = *reinterpret_cast<const std::uint64_t*>(r.sp);
  std::uint64_t fp = r.fp;
  while (depth < max_depth) {
    if (fp < r.sp || fp > stack.high - 16 || (fp & 7) != 0) break;
    const std::uint64_t* frame = reinterpret_cast<const std::uint64_t*>(fp);
    const std::uint64_t next = frame[0];
    const std::uint64_t ret = frame[1];
    if (ret < 4096) break;
    pcs[depth++] = ret;
    if (next <= fp) break;
    fp = next;
  }
  return depth;
}

}  // namespace maxcode::sampler

// maxcode's CPU sampler, loaded into a program with LD_PRELOAD.
//
// With MAXCODE_PROFILE_DIR set, every process that loads it samples its own call stacks
// on SIGPROF (ITIMER_PROF: CPU time of the whole process, every MAXCODE_SAMPLE_US
// microseconds, default 1000; the kernel rounds up to its tick) and writes one profile
// file when it ends: at exit, before it execs another program, or when a fatal signal
// or SIGTERM/SIGINT kills it (so a crash or a timeout still leaves a partial profile).
// A forked child clears what it inherited and starts its own file.
//
// The rule above all: never break the program. Nothing here allocates, locks or calls
// stdio from a signal handler; system calls interrupted by SIGPROF restart
// (SA_RESTART); a program that handles SIGPROF itself is left alone; on any failure the
// sampler turns itself off and the program runs on.
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

#include "runner/inject/sampler_stack.h"
#include "runner/inject/sampler_table.h"
#include "runner/inject/sampler_writer.h"

namespace {

using namespace maxcode::sampler;

enum State : int { kOff = 0, kSampling = 1, kDone = 2 };

StackTable g_table;
std::atomic<int> g_state{kOff};
std::atomic<std::uint64_t> g_samples{0};
std::atomic<std::uint64_t> g_dropped{0};
char g_dir[3800];
long g_interval_us = 1000;
long g_pid = 0;            // the process the table belongs to (a vfork child is not it)
std::uint64_t g_start_ns = 0;

// Signals after which the process dies: we write the profile first, then let the
// default action run. SIGTERM and SIGINT are how a timeout ends a benchmark.
constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTERM, SIGINT};

using ExecveFn = int (*)(const char*, char* const[], char* const[]);
using ExecvpeFn = int (*)(const char*, char* const[], char* const[]);
using FexecveFn = int (*)(int, char* const[], char* const[]);
ExecveFn g_real_execve = nullptr;
ExecvpeFn g_real_execvpe = nullptr;
FexecveFn g_real_fexecve = nullptr;

std::uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

void say(const char* message) {
  const char prefix[] = "maxcode sampler: ";
  (void)!write(2, prefix, sizeof prefix - 1);
  (void)!write(2, message, strlen(message));
  (void)!write(2, "\n", 1);
}

void arm_timer(long interval_us) {
  itimerval timer{};
  timer.it_interval.tv_sec = interval_us / 1000000;
  timer.it_interval.tv_usec = interval_us % 1000000;
  timer.it_value = timer.it_interval;
  setitimer(ITIMER_PROF, &timer, nullptr);
}

void on_sigprof(int, siginfo_t*, void* context) {
  if (g_state.load(std::memory_order_relaxed) != kSampling) return;
  const int saved_errno = errno;
  Registers registers;
  std::uint64_t pcs[kMaxDepth];
  int depth = registers_of(context, registers) ? walk_stack(registers, pcs, kMaxDepth) : 0;
  g_samples.fetch_add(1, std::memory_order_relaxed);
  if (depth == 0 || !g_table.add(pcs, depth)) g_dropped.fetch_add(1, std::memory_order_relaxed);
  errno = saved_errno;
}

// Stops sampling and writes the file, once per process image. Async-signal-safe.
void finish(const char* status, int signal) {
  int expected = kSampling;
  if (!g_state.compare_exchange_strong(expected, kDone)) return;
  arm_timer(0);
  const std::uint64_t samples = g_samples.load();
  // A process that never ran long enough to be sampled (a shell between fork and exec)
  // adds nothing but a file; one that died of a signal is worth reporting regardless.
  if (samples == 0 && signal == 0) return;
  ProcessFacts facts;
  facts.pid = g_pid;
  facts.ppid = static_cast<long>(syscall(SYS_getppid));
  facts.interval_us = g_interval_us;
  facts.samples = samples;
  facts.dropped = g_dropped.load();
  facts.wall_ns = now_ns() - g_start_ns;
  facts.status = status;
  facts.signal = signal;
  char path[4096];
  if (!profile_path(path, sizeof path, g_dir, g_pid, g_start_ns) || !write_profile(path, facts, g_table))
    say("cannot write the profile file in MAXCODE_PROFILE_DIR");
}

void on_fatal(int signal, siginfo_t*, void*) {
  const int saved_errno = errno;
  finish("signal", signal);
  // The default action back, by hand rather than by SA_RESETHAND: that flag makes the
  // action the default as the signal is taken, before the kernel blocks it for the
  // handler, and `timeout` sends SIGTERM twice (to the child, then to its group); the
  // second one landing in that gap killed the process before the profile was written.
  struct sigaction fallback{};
  fallback.sa_handler = SIG_DFL;
  sigemptyset(&fallback.sa_mask);
  sigaction(signal, &fallback, nullptr);
  errno = saved_errno;
  // The signal is blocked while we run: raised now, it ends the process as it would have
  // as soon as the handler returns (a fault that returns also re-executes and faults again).
  raise(signal);
}

// Starts (or restarts, in a forked child) sampling for the current process.
void begin_process() {
  g_pid = static_cast<long>(syscall(SYS_getpid));
  g_samples.store(0), g_dropped.store(0);
  g_start_ns = now_ns();
  g_state.store(kSampling);
  arm_timer(g_interval_us);
}

void after_fork_child() {
  // Timers are not inherited, the table is: clear it and start a file of our own.
  if (g_state.load() != kSampling) return;
  g_table.clear();
  begin_process();
}

// exec: interval timers survive it but our SIGPROF handler does not, and SIGPROF's
// default action kills. So stop the timer, write what this image sampled, and ignore
// SIGPROF (which also drops one already pending) until the new image's sampler starts.
bool before_exec() {
  if (g_state.load() != kSampling || static_cast<long>(syscall(SYS_getpid)) != g_pid) return false;
  finish("exec", 0);
  signal(SIGPROF, SIG_IGN);
  return true;
}

void after_failed_exec(bool stopped) {
  if (!stopped) return;
  struct sigaction action{};
  action.sa_sigaction = on_sigprof;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaction(SIGPROF, &action, nullptr);
  g_table.clear();
  begin_process();
}

bool install(int signal, void (*handler)(int, siginfo_t*, void*), int flags, bool take_ignored) {
  struct sigaction current{};
  if (sigaction(signal, nullptr, &current) != 0) return false;
  const bool is_default = !(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_DFL;
  const bool is_ignored = !(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_IGN;
  if (!is_default && !(is_ignored && take_ignored)) return false;  // the program's own choice
  struct sigaction action{};
  action.sa_sigaction = handler;
  action.sa_flags = SA_SIGINFO | flags;
  sigemptyset(&action.sa_mask);
  // One fatal signal's handler is not interrupted by another's.
  for (int fatal : kFatalSignals) sigaddset(&action.sa_mask, fatal);
  return sigaction(signal, &action, nullptr) == 0;
}

// getenv, not the CLI: the sampler runs inside the user's program; its environment is maxcode's only channel in.
long interval_from_env() {
  const char* text = getenv("MAXCODE_SAMPLE_US");
  if (!text || !*text) return 1000;
  long v = strtol(text, nullptr, 10);
  return v < 100 ? 100 : v > 1000000 ? 1000000 : v;
}

__attribute__((constructor)) void sampler_start() {
  const char* dir = getenv("MAXCODE_PROFILE_DIR");
  if (!dir || !*dir) return;
  // Absolute now: the program may change its directory before it writes.
  g_dir[0] = 0;
  if (dir[0] != '/' && (!getcwd(g_dir, sizeof g_dir - 2) || strlen(g_dir) + 1 >= sizeof g_dir)) g_dir[0] = 0;
  if (g_dir[0]) strcat(g_dir, "/");
  if (strlen(g_dir) + strlen(dir) >= sizeof g_dir) {
    say("MAXCODE_PROFILE_DIR is too long; not sampling");
    return;
  }
  strcat(g_dir, dir);
  g_interval_us = interval_from_env();
  g_real_execve = reinterpret_cast<ExecveFn>(dlsym(RTLD_NEXT, "execve"));
  g_real_execvpe = reinterpret_cast<ExecvpeFn>(dlsym(RTLD_NEXT, "execvpe"));
  g_real_fexecve = reinterpret_cast<FexecveFn>(dlsym(RTLD_NEXT, "fexecve"));
  void* memory = mmap(nullptr, StackTable::bytes(), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (memory == MAP_FAILED) {
    say("no memory for the stack table; not sampling");
    return;
  }
  g_table.attach(memory);
  // SIG_IGN is taken over too: it is what a sampled parent leaves behind across exec.
  if (!install(SIGPROF, on_sigprof, SA_RESTART, true)) {
    say("the program handles SIGPROF itself; not sampling");
    return;
  }
  for (int signal : kFatalSignals) install(signal, on_fatal, 0, false);
  pthread_atfork(nullptr, nullptr, after_fork_child);
  begin_process();
}

__attribute__((destructor)) void sampler_stop() { finish("exit", 0); }

}  // namespace

// ---------------------------------------------------------------- exec family
// Interposed so that the timer never outlives the image that handles its signal. A
// vfork child (same memory, other pid) passes straight through.

extern "C" __attribute__((visibility("default"))) int execve(const char* path, char* const argv[],
                                                             char* const envp[]) {
  if (!g_real_execve) g_real_execve = reinterpret_cast<ExecveFn>(dlsym(RTLD_NEXT, "execve"));
  const bool stopped = before_exec();
  const int rc = g_real_execve(path, argv, envp);
  const int saved_errno = errno;
  after_failed_exec(stopped);
  errno = saved_errno;
  return rc;
}

extern "C" __attribute__((visibility("default"))) int execvpe(const char* file, char* const argv[],
                                                              char* const envp[]) {
  if (!g_real_execvpe) g_real_execvpe = reinterpret_cast<ExecvpeFn>(dlsym(RTLD_NEXT, "execvpe"));
  const bool stopped = before_exec();
  const int rc = g_real_execvpe(file, argv, envp);
  const int saved_errno = errno;
  after_failed_exec(stopped);
  errno = saved_errno;
  return rc;
}

extern "C" __attribute__((visibility("default"))) int fexecve(int fd, char* const argv[],
                                                              char* const envp[]) {
  if (!g_real_fexecve) g_real_fexecve = reinterpret_cast<FexecveFn>(dlsym(RTLD_NEXT, "fexecve"));
  const bool stopped = before_exec();
  const int rc = g_real_fexecve(fd, argv, envp);
  const int saved_errno = errno;
  after_failed_exec(stopped);
  errno = saved_errno;
  return rc;
}

extern "C" __attribute__((visibility("default"))) int execv(const char* path, char* const argv[]) {
  return execve(path, argv, environ);
}

extern "C" __attribute__((visibility("default"))) int execvp(const char* file, char* const argv[]) {
  return execvpe(file, argv, environ);
}

namespace {

// execl, execlp, execle: the arguments as an array on the stack.
int count_args(va_list args) {
  int n = 1;
  while (va_arg(args, const char*) != nullptr) ++n;
  return n;
}

}  // namespace

#define MAXCODE_COLLECT_ARGS(first)                         \
  va_list args;                                             \
  va_start(args, first);                                    \
  va_list counting;                                         \
  va_copy(counting, args);                                  \
  const int n = count_args(counting);                       \
  va_end(counting);                                         \
  char* argv[n + 1];                                        \
  argv[0] = const_cast<char*>(first);                       \
  for (int i = 1; i <= n; ++i) argv[i] = va_arg(args, char*);

extern "C" __attribute__((visibility("default"))) int execl(const char* path, const char* arg, ...) {
  MAXCODE_COLLECT_ARGS(arg)
  va_end(args);
  return execve(path, argv, environ);
}

extern "C" __attribute__((visibility("default"))) int execlp(const char* file, const char* arg, ...) {
  MAXCODE_COLLECT_ARGS(arg)
  va_end(args);
  return execvpe(file, argv, environ);
}

extern "C" __attribute__((visibility("default"))) int execle(const char* path, const char* arg, ...) {
  MAXCODE_COLLECT_ARGS(arg)
  char* const* envp = va_arg(args, char* const*);
  va_end(args);
  return execve(path, argv, envp);
}

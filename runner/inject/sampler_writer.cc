#include "runner/inject/sampler_writer.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

namespace maxcode::sampler {

namespace {

// Buffered output to a file descriptor. One writer at a time (the caller guarantees it),
// so the buffer can be static rather than on a possibly small signal stack.
class Out {
 public:
  explicit Out(int fd) : fd_(fd) {}
  bool ok() const { return ok_; }
  void put(const char* data, long n) {
    while (n > 0) {
      if (used_ == sizeof buffer_) flush();
      long room = static_cast<long>(sizeof buffer_) - used_;
      long take = n < room ? n : room;
      for (long i = 0; i < take; ++i) buffer_[used_ + i] = data[i];
      used_ += take, data += take, n -= take;
    }
  }
  void str(const char* s) {
    long n = 0;
    while (s[n]) ++n;
    put(s, n);
  }
  void dec(std::uint64_t v) {
    char digits[24];
    int n = 0;
    do digits[n++] = static_cast<char>('0' + v % 10); while ((v /= 10) != 0);
    while (n > 0) put(&digits[--n], 1);
  }
  void hex(std::uint64_t v) {
    char digits[20];
    int n = 0;
    do digits[n++] = "0123456789abcdef"[v & 15]; while ((v >>= 4) != 0);
    while (n > 0) put(&digits[--n], 1);
  }
  void line(const char* key, std::uint64_t v) { str(key), put(" ", 1), dec(v), put("\n", 1); }
  void flush() {
    long done = 0;
    while (done < used_ && ok_) {
      long n = syscall(SYS_write, fd_, buffer_ + done, used_ - done);
      if (n <= 0) ok_ = false;
      else done += n;
    }
    used_ = 0;
  }

 private:
  int fd_;
  bool ok_ = true;
  long used_ = 0;
  static inline char buffer_[1 << 16];
};

std::uint64_t process_cpu_ns() {
  timespec ts{};
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

void copy_file(Out& out, const char* path) {
  const int fd = static_cast<int>(syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC));
  if (fd < 0) return;
  char chunk[4096];
  bool ends_in_newline = true;
  for (;;) {
    long n = syscall(SYS_read, fd, chunk, sizeof chunk);
    if (n <= 0) break;
    out.put(chunk, n);
    ends_in_newline = chunk[n - 1] == '\n';
  }
  if (!ends_in_newline) out.put("\n", 1);
  syscall(SYS_close, fd);
}

}  // namespace

bool profile_path(char* out, int size, const char* dir, long pid, std::uint64_t stamp) {
  int n = 0;
  auto add = [&](const char* s) {
    while (*s && n < size - 1) out[n++] = *s++;
    return *s == 0;
  };
  auto add_number = [&](std::uint64_t v) {
    char digits[24];
    int k = 0;
    do digits[k++] = static_cast<char>('0' + v % 10); while ((v /= 10) != 0);
    while (k > 0 && n < size - 1) out[n++] = digits[--k];
    return k == 0;
  };
  bool fits = add(dir) && add("/cpu-") && add_number(static_cast<std::uint64_t>(pid)) && add("-") &&
              add_number(stamp) && add(".txt");
  out[n] = 0;
  return fits;
}

bool write_profile(const char* path, const ProcessFacts& facts, const StackTable& table) {
  const int fd = static_cast<int>(
      syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (fd < 0) return false;
  Out out(fd);
  out.str("maxcode-sampler 1\n");
  out.line("pid", static_cast<std::uint64_t>(facts.pid));
  out.line("ppid", static_cast<std::uint64_t>(facts.ppid));
  char exe[4096];
  long n = syscall(SYS_readlink, "/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    out.str("exe "), out.put(exe, n), out.put("\n", 1);
  }
  out.line("interval_us", static_cast<std::uint64_t>(facts.interval_us));
  out.str("status "), out.str(facts.status);
  if (facts.signal) out.put(" ", 1), out.dec(static_cast<std::uint64_t>(facts.signal));
  out.put("\n", 1);
  out.line("samples", facts.samples);
  out.line("dropped", facts.dropped);
  out.line("cpu_ns", process_cpu_ns());
  out.line("wall_ns", facts.wall_ns);
  out.str("maps\n");
  copy_file(out, "/proc/self/maps");
  out.str("end\nstacks\n");
  table.for_each([&](std::uint64_t count, const std::uint64_t* frames, int depth) {
    out.dec(count);
    for (int i = 0; i < depth; ++i) out.put(" ", 1), out.hex(frames[i]);
    out.put("\n", 1);
  });
  out.str("end\n");
  out.flush();
  const bool ok = out.ok();
  syscall(SYS_close, fd);
  return ok;
}

}  // namespace maxcode::sampler

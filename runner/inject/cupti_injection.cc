// maxcode's GPU profiler: a CUDA injection library (CUDA_INJECTION64_PATH).
//
// The CUDA driver calls InitializeInjection when the program first initializes CUDA.
// We enable CUPTI activity records for kernels (CONCURRENT_KERNEL: the KERNEL kind
// would serialize every launch and change what we measure), memcpy and memset, sum
// them per kernel and launch shape (runner/instrument/gpu_activity.cc), and write one
// JSON file per process into MAXCODE_PROFILE_DIR: at exit after a forced flush, and
// every few seconds while the program runs, so a program killed on a timeout still
// leaves what it did until then.
//
// Never break the program: every CUPTI call is checked, a failure is reported once on
// stderr and in the file, and profiling degrades (or stops) while the program goes on.
// A forked child does not own the parent's CUDA state; it stays silent.
#include <cuda.h>
#include <cupti.h>
#include <pthread.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>

#include "runner/instrument/gpu_activity.h"

namespace {

constexpr std::size_t kBufferBytes = 8u << 20;
constexpr std::size_t kBufferAlign = 8;
constexpr auto kSnapshotEvery = std::chrono::seconds(2);

struct Injection {
  std::mutex mutex;
  maxcode::GpuActivity activity;
  std::string dir;
  std::string path;
  std::string exe;
  long pid = 0;
  bool enabled = false;     // MAXCODE_PROFILE_DIR set: write a file at exit
  bool registered = false;  // CUPTI took our buffer callbacks: flush them at exit
  bool forked_child = false;
  std::chrono::steady_clock::time_point last_snapshot{};
};

// Never destroyed: CUPTI may deliver buffers from its own thread while the process
// runs its static destructors.
Injection& state() {
  static Injection* s = new Injection;
  return *s;
}

std::string result_text(CUptiResult result) {
  const char* text = nullptr;
  if (cuptiGetResultString(result, &text) != CUPTI_SUCCESS || !text) return "CUPTI error " + std::to_string(result);
  return text;
}

// Checks one CUPTI call; on failure notes it (stderr once, and in the file).
bool check(CUptiResult result, const char* what) {
  if (result == CUPTI_SUCCESS) return true;
  const std::string message = std::string(what) + ": " + result_text(result);
  std::fprintf(stderr, "maxcode cupti: %s\n", message.c_str());
  Injection& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.activity.add_message(message);
  return false;
}

const char* copy_kind(std::uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return "HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return "AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return "AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return "AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return "DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
    default: return "other";
  }
}

// Writes the summary atomically (temp file, then rename): a reader never sees half.
void write_summary(Injection& s, bool complete) {
  const maxcode::GpuSummary summary = s.activity.summary(s.pid, s.exe, complete);
  const std::string temp = s.path + ".tmp";
  {
    std::ofstream out(temp, std::ios::trunc);
    out << maxcode::to_json(summary).dump() << "\n";
    if (!out) {
      std::fprintf(stderr, "maxcode cupti: cannot write %s\n", temp.c_str());
      return;
    }
  }
  std::error_code ec;
  std::filesystem::rename(temp, s.path, ec);
  if (ec) std::fprintf(stderr, "maxcode cupti: cannot write %s: %s\n", s.path.c_str(), ec.message().c_str());
}

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(kBufferAlign, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void add_record(maxcode::GpuActivity& activity, const CUpti_Activity* record) {
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      maxcode::KernelLaunch launch;
      launch.name = k->name ? k->name : "<unnamed kernel>";
      launch.grid = {k->gridX, k->gridY, k->gridZ};
      launch.block = {k->blockX, k->blockY, k->blockZ};
      launch.registers = k->registersPerThread;
      launch.static_smem = k->staticSharedMemory;
      launch.dynamic_smem = k->dynamicSharedMemory;
      launch.device = k->deviceId;
      launch.stream = k->streamId;
      launch.start_ns = k->start;
      launch.end_ns = k->end;
      activity.add_kernel(launch);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      activity.add_transfer(copy_kind(m->copyKind), m->bytes, m->start, m->end);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      activity.add_transfer("memset", m->bytes, m->start, m->end);
      break;
    }
    default:
      break;
  }
}

void CUPTIAPI buffer_completed(CUcontext context, std::uint32_t stream, std::uint8_t* buffer,
                               std::size_t /*size*/, std::size_t valid) {
  Injection& s = state();
  if (buffer && valid > 0) {
    std::unique_lock<std::mutex> lock(s.mutex);
    CUpti_Activity* record = nullptr;
    for (;;) {
      CUptiResult r = cuptiActivityGetNextRecord(buffer, valid, &record);
      if (r == CUPTI_ERROR_MAX_LIMIT_REACHED) break;
      if (r != CUPTI_SUCCESS) {
        s.activity.add_message("cuptiActivityGetNextRecord: " + result_text(r));
        break;
      }
      add_record(s.activity, record);
    }
    std::size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(context, stream, &dropped) == CUPTI_SUCCESS)
      s.activity.add_dropped(dropped);
    // A snapshot now and then: what a timeout leaves behind.
    const auto now = std::chrono::steady_clock::now();
    if (!s.forked_child && now - s.last_snapshot >= kSnapshotEvery) {
      s.last_snapshot = now;
      write_summary(s, false);
    }
  }
  std::free(buffer);
}

void at_exit() {
  Injection& s = state();
  if (!s.enabled || s.forked_child || getpid() != s.pid) return;
  // Forced: also the buffers of records still being filled, so nothing is left behind.
  if (s.registered)
    check(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
  std::lock_guard<std::mutex> lock(s.mutex);
  write_summary(s, true);
}

void after_fork_child() { state().forked_child = true; }

std::string exe_path() {
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : path.string();
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  static std::once_flag once;
  std::call_once(once, [] {
    Injection& s = state();
    const char* dir = std::getenv("MAXCODE_PROFILE_DIR");
    if (!dir || !*dir) return;  // loaded outside `maxcode profile`: do nothing
    s.dir = dir;
    s.pid = getpid();
    s.exe = exe_path();
    const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
    s.path = s.dir + "/gpu-" + std::to_string(s.pid) + "-" + std::to_string(stamp) + ".json";
    s.last_snapshot = std::chrono::steady_clock::now();
    s.enabled = true;
    pthread_atfork(nullptr, nullptr, after_fork_child);
    // Registered during CUDA's initialization, after the runtime's own exit handler,
    // so it runs first, while the contexts still exist. It writes the file even when
    // CUPTI refused us below: the file then says why there are no kernels.
    std::atexit(at_exit);
    if (!check(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed),
               "cuptiActivityRegisterCallbacks"))
      return;
    s.registered = true;
    if (!check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
               "cuptiActivityEnable(CONCURRENT_KERNEL)"))
      return;
    // Copies and memsets matter less: without them the kernels are still right.
    check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY), "cuptiActivityEnable(MEMCPY)");
    check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET), "cuptiActivityEnable(MEMSET)");
    // Deliver buffers at least once a second, for the snapshots.
    check(cuptiActivityFlushPeriod(1000), "cuptiActivityFlushPeriod");
  });
  return 1;
}

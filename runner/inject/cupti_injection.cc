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
// Beside the records, CUPTI callbacks count the driver calls the records must account
// for (ApiCalls in gpu_activity.h): every kernel launch call that returns successfully
// (driver and runtime, each level counted on its own, the larger count kept),
// graph launches, CUDA IPC calls and contexts created. Code in the program can switch
// activity recording off (cuptiActivityDisable) around a kernel, but the launch call
// is still counted, and the evaluator compares the two. The file carries the pid and
// the parent's pid, so that every process of a run is accounted for.
//
// Where maxcode times a benchmark, MAXCODE_PROFILE_SOCKET names a Unix socket instead
// of the directory: each process connects once, at initialization, and sends each
// summary as one line of JSON (the snapshots, then the last one, marked complete), after
// which it shuts its side of the connection. The socket's directory is read-only to the
// benchmark; what was sent cannot be rewritten afterwards, as a file could be.
//
// Never break the program: every CUPTI call is checked, a failure is reported once on
// stderr and in the file, and profiling degrades (or stops) while the program goes on.
// A forked child does not own the parent's CUDA state; it stays silent.
#include <cuda.h>
#include <cupti.h>  // with generated_cuda_meta.h: the parameters of each driver call
#include <dlfcn.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
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
  bool enabled = false;     // MAXCODE_PROFILE_DIR or _SOCKET set: report at exit
  int socket = -1;          // connected to MAXCODE_PROFILE_SOCKET: summaries go there
  bool sealed = false;      // the final summary was sent: nothing more goes out
  bool registered = false;  // CUPTI took our buffer callbacks: flush them at exit
  bool forked_child = false;
  std::chrono::steady_clock::time_point last_snapshot{};
  // Driver calls, counted on the program's threads: atomics, so a launch never waits
  // for the mutex that a buffer being parsed holds. The IPC map is rare: under `mutex`.
  CUpti_SubscriberHandle subscriber = nullptr;
  std::atomic<std::uint64_t> launches{0};          // driver launch calls
  std::atomic<std::uint64_t> runtime_launches{0};  // runtime launch calls
  std::atomic<std::uint64_t> graph_launches{0};
  std::atomic<std::uint64_t> contexts_created{0};
  std::map<std::string, std::uint64_t> ipc;          // by the driver's name
  std::map<std::string, std::uint64_t> runtime_ipc;  // the runtime's calls, by the driver's name
  using IsCapturing = CUresult (*)(CUstream, CUstreamCaptureStatus*);
  IsCapturing is_capturing = nullptr;
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

// Whether our subscription still stands: code in the program that finalizes CUPTI
// (cuptiFinalize) ends it, and with it the counts; the file then says so.
bool callbacks_intact(Injection& s) {
  if (!s.subscriber) return false;
  std::uint32_t enabled = 0;
  return cuptiGetCallbackState(&enabled, s.subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                               CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel) == CUPTI_SUCCESS &&
         enabled != 0;
}

constexpr CUpti_CallbackId kLaunchCalls[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernelMultiDevice,
};
constexpr CUpti_CallbackId kRuntimeLaunchCalls[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
};
constexpr CUpti_CallbackId kRuntimeIpcCalls[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaIpcGetMemHandle_v4010,
    CUPTI_RUNTIME_TRACE_CBID_cudaIpcOpenMemHandle_v4010,
    CUPTI_RUNTIME_TRACE_CBID_cudaIpcGetEventHandle_v4010,
    CUPTI_RUNTIME_TRACE_CBID_cudaIpcOpenEventHandle_v4010,
};
constexpr CUpti_CallbackId kOtherCalls[] = {
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuIpcGetMemHandle,
    CUPTI_DRIVER_TRACE_CBID_cuIpcOpenMemHandle,
    CUPTI_DRIVER_TRACE_CBID_cuIpcOpenMemHandle_v2,
    CUPTI_DRIVER_TRACE_CBID_cuIpcGetEventHandle,
    CUPTI_DRIVER_TRACE_CBID_cuIpcOpenEventHandle,
    CUPTI_DRIVER_TRACE_CBID_cuCtxCreate,
    CUPTI_DRIVER_TRACE_CBID_cuCtxCreate_v2,
    CUPTI_DRIVER_TRACE_CBID_cuCtxCreate_v3,
    CUPTI_DRIVER_TRACE_CBID_cuCtxCreate_v4,
    CUPTI_DRIVER_TRACE_CBID_cuGreenCtxCreate,
};

// A launch into a stream that is being captured runs nothing now: its kernels come
// later, from cuGraphLaunch, as graph records. Such a launch is not counted.
bool capturing(const Injection& s, CUstream stream) {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  return s.is_capturing && s.is_capturing(stream, &status) == CUDA_SUCCESS &&
         status != CU_STREAM_CAPTURE_STATUS_NONE;
}

// Kernels started by one successful launch call (0 when captured into a graph).
std::uint64_t kernels_launched(const Injection& s, CUpti_CallbackId id, const void* params) {
  // The per-thread default stream is what a null stream means for the _ptsz calls.
  auto per_thread = [](CUstream stream) { return stream ? stream : CU_STREAM_PER_THREAD; };
  CUstream stream = nullptr;
  switch (id) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
      stream = static_cast<const cuLaunchKernel_params*>(params)->hStream;
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
      stream = per_thread(static_cast<const cuLaunchKernel_ptsz_params*>(params)->hStream);
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx: {
      const CUlaunchConfig* config = static_cast<const cuLaunchKernelEx_params*>(params)->config;
      stream = config ? config->hStream : nullptr;
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
      const CUlaunchConfig* config = static_cast<const cuLaunchKernelEx_ptsz_params*>(params)->config;
      stream = per_thread(config ? config->hStream : nullptr);
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
      stream = static_cast<const cuLaunchCooperativeKernel_params*>(params)->hStream;
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
      stream = per_thread(static_cast<const cuLaunchCooperativeKernel_ptsz_params*>(params)->hStream);
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync:
      stream = static_cast<const cuLaunchGridAsync_params*>(params)->hStream;
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernelMultiDevice: {
      const auto* p = static_cast<const cuLaunchCooperativeKernelMultiDevice_params*>(params);
      std::uint64_t n = 0;
      for (unsigned i = 0; p->launchParamsList && i < p->numDevices; ++i)
        n += capturing(s, p->launchParamsList[i].hStream) ? 0 : 1;
      return n;
    }
    default:  // cuLaunch, cuLaunchGrid: the legacy default stream
      break;
  }
  return capturing(s, stream) ? 0 : 1;
}

// The runtime's launch calls, likewise.
std::uint64_t runtime_kernels_launched(const Injection& s, CUpti_CallbackId id, const void* params) {
  auto per_thread = [](cudaStream_t stream) { return stream ? stream : cudaStreamPerThread; };
  cudaStream_t stream = nullptr;
  switch (id) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
      stream = static_cast<const cudaLaunchKernel_v7000_params*>(params)->stream;
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
      stream = per_thread(static_cast<const cudaLaunchKernel_ptsz_v7000_params*>(params)->stream);
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060: {
      const cudaLaunchConfig_t* config = static_cast<const cudaLaunchKernelExC_v11060_params*>(params)->config;
      stream = config ? config->stream : nullptr;
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060: {
      const cudaLaunchConfig_t* config = static_cast<const cudaLaunchKernelExC_ptsz_v11060_params*>(params)->config;
      stream = per_thread(config ? config->stream : nullptr);
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000:
      stream = static_cast<const cudaLaunchCooperativeKernel_v9000_params*>(params)->stream;
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000:
      stream = per_thread(static_cast<const cudaLaunchCooperativeKernel_ptsz_v9000_params*>(params)->stream);
      break;
    default:
      return 0;
  }
  return capturing(s, static_cast<CUstream>(stream)) ? 0 : 1;
}

const char* ipc_name(CUpti_CallbackId id) {
  switch (id) {
    case CUPTI_DRIVER_TRACE_CBID_cuIpcGetMemHandle: return "cuIpcGetMemHandle";
    case CUPTI_DRIVER_TRACE_CBID_cuIpcOpenMemHandle:
    case CUPTI_DRIVER_TRACE_CBID_cuIpcOpenMemHandle_v2: return "cuIpcOpenMemHandle";
    case CUPTI_DRIVER_TRACE_CBID_cuIpcGetEventHandle: return "cuIpcGetEventHandle";
    case CUPTI_DRIVER_TRACE_CBID_cuIpcOpenEventHandle: return "cuIpcOpenEventHandle";
    default: return nullptr;
  }
}

const char* runtime_ipc_name(CUpti_CallbackId id) {
  switch (id) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaIpcGetMemHandle_v4010: return "cuIpcGetMemHandle";
    case CUPTI_RUNTIME_TRACE_CBID_cudaIpcOpenMemHandle_v4010: return "cuIpcOpenMemHandle";
    case CUPTI_RUNTIME_TRACE_CBID_cudaIpcGetEventHandle_v4010: return "cuIpcGetEventHandle";
    case CUPTI_RUNTIME_TRACE_CBID_cudaIpcOpenEventHandle_v4010: return "cuIpcOpenEventHandle";
    default: return nullptr;
  }
}

void CUPTIAPI on_driver_call(void* /*userdata*/, CUpti_CallbackDomain domain, CUpti_CallbackId id,
                             const void* data) {
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API && domain != CUPTI_CB_DOMAIN_RUNTIME_API) return;
  const auto* call = static_cast<const CUpti_CallbackData*>(data);
  // Counted as the call returns, and only if it succeeded: a failed launch runs nothing.
  // (CUresult and cudaError_t alike: 0 is success.)
  if (call->callbackSite != CUPTI_API_EXIT || !call->functionReturnValue ||
      *static_cast<const int*>(call->functionReturnValue) != 0)
    return;
  Injection& s = state();
  if (s.forked_child) return;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    if (const char* name = runtime_ipc_name(id)) {
      std::lock_guard<std::mutex> lock(s.mutex);
      ++s.runtime_ipc[name];
    } else {
      s.runtime_launches += runtime_kernels_launched(s, id, call->functionParams);
    }
    return;
  }
  for (CUpti_CallbackId launch : kLaunchCalls) {
    if (id == launch) {
      s.launches += kernels_launched(s, id, call->functionParams);
      return;
    }
  }
  if (id == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch || id == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz) {
    ++s.graph_launches;
  } else if (const char* name = ipc_name(id)) {
    std::lock_guard<std::mutex> lock(s.mutex);
    ++s.ipc[name];
  } else {
    ++s.contexts_created;
  }
}

// Subscribes to the driver calls above. Another CUPTI client already subscribed (a
// tool, or the program itself before CUDA started) makes this fail: the file then
// says the calls were not counted, and the evaluator treats that as a finding.
void count_driver_calls(Injection& s) {
  if (void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD)) {
    // The driver's own entry point, never one the program defines under that name.
    s.is_capturing = reinterpret_cast<Injection::IsCapturing>(dlsym(cuda, "cuStreamIsCapturing"));
  }
  CUpti_SubscriberHandle subscriber = nullptr;
  const CUptiResult subscribed = cuptiSubscribe(&subscriber, on_driver_call, nullptr);
  if (subscribed != CUPTI_SUCCESS) {
    // Not a message of the file: the activity records are still right, and the
    // evaluator judges a run whose calls were not counted against the original's.
    std::fprintf(stderr, "maxcode cupti: cuptiSubscribe: %s (kernel launches are not counted)\n",
                 result_text(subscribed).c_str());
    return;
  }
  // A call this driver does not know (a newer one than it has) is left out, on stderr
  // only: a count can then only fall short, which the evaluator never holds against a
  // run. Without cuLaunchKernel itself nothing is counted.
  auto enable = [&](CUpti_CallbackDomain domain, CUpti_CallbackId id) {
    const CUptiResult r = cuptiEnableCallback(1, subscriber, domain, id);
    if (r != CUPTI_SUCCESS)
      std::fprintf(stderr, "maxcode cupti: cuptiEnableCallback(%d, %u): %s\n", static_cast<int>(domain),
                   static_cast<unsigned>(id), result_text(r).c_str());
    return r == CUPTI_SUCCESS;
  };
  bool core = true;
  for (CUpti_CallbackId id : kLaunchCalls)
    if (!enable(CUPTI_CB_DOMAIN_DRIVER_API, id) && id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel) core = false;
  for (CUpti_CallbackId id : kOtherCalls) enable(CUPTI_CB_DOMAIN_DRIVER_API, id);
  for (CUpti_CallbackId id : kRuntimeLaunchCalls) enable(CUPTI_CB_DOMAIN_RUNTIME_API, id);
  for (CUpti_CallbackId id : kRuntimeIpcCalls) enable(CUPTI_CB_DOMAIN_RUNTIME_API, id);
  if (core) s.subscriber = subscriber;
}

// Sends one summary as a line. The final one seals the connection: our side is shut,
// so nothing can be added to what this process reported.
void send_summary(Injection& s, const std::string& line, bool complete) {
  if (s.sealed) return;
  std::size_t sent = 0;
  while (sent < line.size()) {
    const ssize_t n = ::send(s.socket, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::fprintf(stderr, "maxcode cupti: cannot send to MAXCODE_PROFILE_SOCKET: %s\n", std::strerror(errno));
      s.sealed = true;
      return;
    }
    sent += static_cast<std::size_t>(n);
  }
  if (complete) {
    ::shutdown(s.socket, SHUT_WR);
    s.sealed = true;
  }
}

// Connects to maxcode's socket; -1 (and a line on stderr) when it cannot.
int connect_socket(const char* path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (std::strlen(path) >= sizeof address.sun_path) {
    std::fprintf(stderr, "maxcode cupti: MAXCODE_PROFILE_SOCKET is too long: %s\n", path);
    return -1;
  }
  std::strcpy(address.sun_path, path);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    std::fprintf(stderr, "maxcode cupti: cannot connect to %s: %s\n", path, std::strerror(errno));
    if (fd >= 0) ::close(fd);
    return -1;
  }
  return fd;
}

// Writes the summary atomically (temp file, then rename): a reader never sees half. In
// socket mode it is sent instead.
void write_summary(Injection& s, bool complete) {
  maxcode::GpuSummary summary = s.activity.summary(s.pid, s.exe, complete);
  summary.ppid = getppid();
  summary.api.counted = callbacks_intact(s);
  // The runtime launches through the driver, and CUPTI reports both levels: the larger
  // count stands, so no launch is counted twice, and none is missed where only one
  // level is reported.
  summary.api.launches = std::max(s.launches.load(), s.runtime_launches.load());
  summary.api.graph_launches = s.graph_launches.load();
  summary.api.contexts_created = s.contexts_created.load();
  // Per name, as the launches: the larger of the two levels.
  summary.api.ipc = s.ipc;
  for (const auto& [name, n] : s.runtime_ipc) summary.api.ipc[name] = std::max(summary.api.ipc[name], n);
  if (s.socket >= 0) {
    send_summary(s, maxcode::to_json(summary).dump() + "\n", complete);
    return;
  }
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
      launch.from_graph = k->graphId != 0 || k->isDeviceLaunched;
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

// The child of a fork keeps no CUDA state of ours, and no way into our connection.
void after_fork_child() {
  Injection& s = state();
  s.forked_child = true;
  if (s.socket >= 0) {
    ::close(s.socket);
    s.socket = -1;
    s.sealed = true;
  }
}

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
    // getenv, not the CLI: this runs inside the user's program; its environment is maxcode's only channel in.
    const char* dir = std::getenv("MAXCODE_PROFILE_DIR");
    const char* socket = std::getenv("MAXCODE_PROFILE_SOCKET");
    const bool to_socket = socket && *socket;
    if (!to_socket && (!dir || !*dir)) return;  // loaded outside maxcode: do nothing
    if (to_socket) {
      // Nowhere to report: stay out of the way. maxcode sees a process that did GPU
      // work without reporting it.
      s.socket = connect_socket(socket);
      if (s.socket < 0) return;
    } else {
      s.dir = dir;
    }
    s.pid = getpid();
    s.exe = exe_path();
    const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
    if (!to_socket) s.path = s.dir + "/gpu-" + std::to_string(s.pid) + "-" + std::to_string(stamp) + ".json";
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
    count_driver_calls(s);
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

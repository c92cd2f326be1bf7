// The runs of the call check (call_check.h): one benchmark through the call shim, its
// records read back beneath its workspace, and two runs held call by call.
#include <sys/stat.h>

#include <algorithm>

#include "runner/evaluate/evaluator_steps.h"
#include "runner/evaluate/precision.h"
#include "runner/evaluate/shimmed_runs.h"
#include "runner/instrument/inject_paths.h"
#include "runner/util/beneath.h"

namespace maxcode {

namespace fs = std::filesystem;
using namespace evaluator_steps;

namespace {

// A recorded output is at most the runtime's cap per call; a file larger than this was
// not written by it.
constexpr std::size_t kMaxRecordFile = 256u << 20;

const CallOutput* find_output(const CallRecord& record, const std::string& name) {
  for (const CallOutput& o : record.outputs)
    if (o.name == name) return &o;
  return nullptr;
}

const CallArg* find_arg(const CallRecord& record, const std::string& name) {
  for (const CallArg& a : record.args)
    if (a.name == name) return &a;
  return nullptr;
}

// An input the candidate's call changes where the original's leaves it: "" or why.
std::string changed_input(const CallRecord& want, const CallRecord& got) {
  for (const CallArg& arg : want.args) {
    if (!arg.input) continue;
    const CallArg* other = find_arg(got, arg.name);
    if (other && other->entry_hash == arg.entry_hash && other->exit_hash != arg.exit_hash &&
        arg.entry_hash == arg.exit_hash)
      return arg.name;
  }
  return "";
}

// One recorded output of a call on both sides, as compare_buffers says.
OutputError compare_output(const BenchmarkConfig& bench, const ShimRun& want, const CallOutput& output,
                           const ShimRun& got, const CallOutput* other) {
  OutputError error;
  if (!other || other->kept != output.kept || other->stride != output.stride || other->offset != output.offset) {
    error.output = output.name;
    error.type = output.type;
    error.mismatches = 1;
    error.first_mismatch = other ? "recorded differently" : "no output recorded";
    return error;
  }
  // Written inside the runs: read beneath their workspaces, never through a link.
  const std::string a = read_beneath(want.root, output.file, kMaxRecordFile);
  const std::string c = read_beneath(got.root, other->file, kMaxRecordFile);
  return compare_buffers(output.name, output.type, a, c, bench.rtol, bench.atol);
}

// What watches a shimmed run of a kernel benchmark: the CUPTI injection (its records'
// directory removed at the end), the lock that keeps a checking run out of every timing
// session's rounds, and, for a timed run, the GPU's clocks and processes.
struct GpuWatch {
  GpuRun gpu;
  std::optional<TimingLock> beside_sessions;
  std::unique_ptr<ClockMonitor> clock;
  std::unique_ptr<GpuProcessMonitor> processes;

  GpuWatch() = default;
  GpuWatch(const GpuWatch&) = delete;
  GpuWatch& operator=(const GpuWatch&) = delete;
  ~GpuWatch() {
    std::error_code ec;
    if (!gpu.dir.empty()) fs::remove_all(gpu.dir, ec);
  }

  // Starts what a run of `spec` on `device` needs; adds the injection's environment and
  // readable paths to the run's.
  void start(GpuRuns& runs, const ShimRunSpec& spec, const GpuDevice* device, const fs::path& lock_dir, EnvVars& env,
             std::vector<std::string>& readable) {
    gpu = runs.start(spec.workspace, device);
    env.insert(env.end(), gpu.env.begin(), gpu.env.end());
    readable.insert(readable.end(), gpu.readable_paths.begin(), gpu.readable_paths.end());
    // A timed run is inside its session's exclusive lock; any other run on the GPU keeps
    // out of every session's rounds (gpu/devices.h).
    if (!spec.timed) beside_sessions.emplace(timing_lock_dir(lock_dir), device->lock_key(), TimingLock::Mode::kShared);
    if (spec.device && spec.timed) {
      clock = std::make_unique<ClockMonitor>(spec.device->nvml);
      // Every process of the run holding a context on the GPU, to be matched with the
      // processes that reported their kernels.
      processes = monitor_gpu_processes(spec.device->nvml);
    }
  }
};

}  // namespace

std::string ShimmedRuns::prepare_library() {
  InjectLibraries libs = find_inject_libraries();
  if (libs.shim.empty()) return "this maxcode has no libmaxcode_shim.so beside it";
  // Shown read-only in the sandbox to the runs that load it.
  library_ = copy_into_work_dir(libs.shim, ctx_.options.work_dir);
  return "";
}

fs::path ShimmedRuns::call_dir(const fs::path& workspace) const { return workspace / (".maxcode-calls-" + ctx_.tag); }

// Clears the records directory `dir` and writes the shim's config there. Both lie inside
// the workspace `ws`, which the runs can write: a directory on the way that a run
// replaced by a link is neither followed nor written through (util/beneath.h). Returns
// "" or what made it impossible.
std::string ShimmedRuns::prepare_dir(const fs::path& ws, const fs::path& dir, std::uint64_t key, bool discover,
                                     const RecordLimits* limits) const {
  std::string config = "key " + std::to_string(key) + "\ndiscover " + (discover ? "1" : "0") + "\n";
  if (limits) {
    config += "cap " + std::to_string(limits->cap) + "\n";
    for (const auto& [name, bytes] : limits->sizes) config += "size " + name + " " + std::to_string(bytes) + "\n";
  }
  std::string unusable;
  if (!remove_beneath(ws, dir, &unusable)) return "the call records' directory cannot be cleared: " + unusable;
  try {
    write_beneath(ws, dir / "config", config);
  } catch (const BeneathError& error) {
    return std::string("the call records' directory cannot be written: ") + error.what();
  }
  return "";
}

std::optional<ShimRun> ShimmedRuns::run(Evaluation& e, const ShimRunSpec& spec, ShimProblem& problem, double* wall_s) {
  const fs::path& ws = spec.workspace;
  const std::size_t b = spec.benchmark;
  const BenchmarkConfig& bench = ctx_.config.benchmarks[b];
  const bool kernels = bench.metric == "kernels";
  const GpuDevice* device = spec.device ? spec.device : gpu_.first_device();
  // Two slots, so that the two sides of an A/A round (one workspace) keep their records.
  const int slot = spec.slot >= 0 ? spec.slot : static_cast<int>(slot_++ % 2);
  const fs::path dir = call_dir(ws) / ("run-" + std::to_string(slot) + "-" + std::to_string(b));
  if (const std::string why = prepare_dir(ws, dir, spec.key, spec.discover, spec.limits); !why.empty()) {
    problem = {why, true};
    return std::nullopt;
  }
  EnvVars env{{"MAXCODE_SEED", std::to_string(ctx_.config.acceptance.seeds.front())},
              {"MAXCODE_SHIM_DIR", dir.string()},
              {"LD_PRELOAD", library_}};
  const std::string label =
      (spec.timed ? "timing " : std::string("call check ")) + bench.name + (spec.key ? " (perturbed)" : " (observed)");
  // A benchmark timed by its kernels runs under the CUPTI injection, as every run of it
  // does: checked and timed runs look alike to the candidate.
  GpuWatch watch;
  std::vector<std::string> readable{fs::path(library_).parent_path().string()};
  if (kernels) watch.start(gpu_, spec, device, ctx_.options.env.lock_dir, env, readable);
  auto r = steps_.run(e, Step(label, bench.command, ws, bench.timeout_s)
                             .on(spec.overrides)
                             .with_env(env)
                             .watch([&watch](long pid) {
                               if (watch.processes) watch.processes->started(pid);
                             })
                             .showing(readable));
  watch.beside_sessions.reset();
  ShimRun run;
  if (watch.clock) run.clock = watch.clock->stop();
  if (watch.processes) run.gpu_processes = watch.processes->stop();
  if (wall_s) *wall_s = r.outcome.wall_s;
  if (!r.tampered.empty()) {
    problem = {r.tampering("the " + label + " run"), true};
    return std::nullopt;
  }
  if (!r.outcome.ok()) {
    problem.reason = "benchmark '" + bench.name + "' " + r.outcome.describe() + " under the call shim" +
                     (spec.key ? " with perturbed inputs" : "");
    return std::nullopt;
  }
  run.out = r.outcome.out;
  return read_run(spec, label, dir, watch.gpu, std::move(run), problem);
}

std::optional<ShimRun> ShimmedRuns::read_run(const ShimRunSpec& spec, const std::string& label, const fs::path& dir,
                                             GpuRun& gpu, ShimRun run, ShimProblem& problem) {
  const fs::path& ws = spec.workspace;
  run.dir = dir;
  run.root = ws;
  try {
    run.records = read_call_records(dir, ws);
    // The recorded outputs are read later, when compared: each must be a file the run
    // wrote, not a link planted in its place (to a host file the sandbox hides) nor a FIFO.
    for (const CallRecord& record : run.records)
      for (const CallOutput& output : record.outputs) {
        const auto st = lstat_beneath(ws, output.file);
        if (st && !S_ISREG(st->st_mode))
          throw BeneathError(S_ISLNK(st->st_mode) ? BeneathError::Kind::kLink : BeneathError::Kind::kNotRegular,
                             output.file.lexically_relative(ws).generic_string(),
                             S_ISLNK(st->st_mode) ? "it is a symbolic link, not followed" : "not a regular file");
      }
  } catch (const BeneathError& error) {
    // The records' directory or a file in it is not what the shim wrote: the run went
    // behind the harness's back.
    const bool tampered = error.kind() != BeneathError::Kind::kIo;
    problem = {
        std::string(tampered ? "the benchmark replaced its call records: " : "its call records cannot be read: ") +
            error.what(),
        tampered};
    return std::nullopt;
  } catch (const std::exception& error) {
    problem.reason = error.what();
    return std::nullopt;
  }
  const BenchmarkConfig& bench = ctx_.config.benchmarks[spec.benchmark];
  if (bench.metric != "kernels") return run;
  try {
    run.kernels = gpu_.records(gpu);
  } catch (const std::exception& error) {
    // The channel of the records was tampered with, or a record file is unreadable.
    problem = {"benchmark '" + bench.name + "' (" + label + "): " + error.what(), true};
    return std::nullopt;
  }
  return run;
}

std::string ShimmedRuns::compare(std::size_t b, const ShimRun& want, const ShimRun& got,
                                 std::map<std::string, OutputError>* errors) const {
  const BenchmarkConfig& bench = ctx_.config.benchmarks[b];
  if (got.records.size() != want.records.size())
    return "it was called " + std::to_string(got.records.size()) + " time(s), the original " +
           std::to_string(want.records.size());
  const std::string total = std::to_string(want.records.size());
  for (std::size_t i = 0; i < want.records.size(); ++i) {
    const CallRecord& w = want.records[i];
    const CallRecord& g = got.records[i];
    const std::string call = "call " + std::to_string(i + 1) + " of " + total;
    // Both sides make the same probes (drawn from the round's key): one missing or added
    // means the shim's state was reached from the candidate's code.
    if (w.probed != g.probed)
      return call + (w.probed ? " was" : " was not") + " preceded by a probe call in the original's run and" +
             (g.probed ? " was" : " was not") + " in its own";
    // A call made right after a probe call on other inputs: a result kept from the probe
    // shows here.
    const std::string after_probe = w.probed ? " (called right after a probe call on slightly different inputs)" : "";
    if (const std::string input = changed_input(w, g); !input.empty())
      return call + " changes its input '" + input + "', which the original leaves as it is";
    for (const CallOutput& output : w.outputs) {
      OutputError error;
      try {
        error = compare_output(bench, want, output, got, find_output(g, output.name));
      } catch (const std::exception& failure) {
        return std::string("its recorded output could not be read: ") + failure.what();
      }
      if (error.mismatches > 0)
        return "'" + output.name + "' of " + call + after_probe +
               " differs from the original's on the same perturbed inputs: " + std::to_string(error.mismatches) +
               " of " + std::to_string(error.values) + " values differ" +
               (error.unwritten ? " (" + std::to_string(error.unwritten) + " not written)" : "") + "; " +
               error.first_mismatch;
      if (errors) {
        auto [it, fresh] = errors->emplace(output.name, error);
        if (!fresh) merge(it->second, error);
      }
    }
  }
  // Last, what it printed: the calls above say more precisely what went wrong.
  if (bench.compare_output) {
    Comparison c = compare_outputs(want.out, got.out, outputs_.tolerance(b));
    if (!c.equal) return "its printed output differs from the original's on the same perturbed inputs: " + c.summary();
  }
  return "";
}

}  // namespace maxcode

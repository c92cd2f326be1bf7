// GPU-side steps: the environment of a run under the CUPTI injection, the checks of its
// kernel activity against the original's and the roofline, compute-sanitizer, and ncu.
#include "runner/evaluate/evaluator.h"

#include <algorithm>

#include "runner/evaluate/evaluator_steps.h"
#include "runner/evaluate/gpu/cuda_tools.h"
#include "runner/evaluate/gpu/launch_audit.h"
#include "runner/evaluate/gpu/launch_consistency.h"
#include "runner/evaluate/gpu/sanitizer.h"
#include "runner/util/beneath.h"
#include "runner/util/files.h"
#include "runner/util/names.h"

namespace maxcode {

namespace fs = std::filesystem;
using namespace evaluator_steps;

namespace {

// An ncu log is some kilobytes per kernel launch profiled: more than this was not
// written by ncu.
constexpr std::size_t kMaxNcuLogBytes = 64u << 20;

}  // namespace

std::vector<std::pair<std::string, std::string>> Evaluator::device_env(const GpuDevice* device) const {
  if (!device || device->visible.empty()) return {};
  return {{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}, {"CUDA_VISIBLE_DEVICES", device->visible}};
}

Evaluator::GpuRun Evaluator::gpu_run(const fs::path& ws, const GpuDevice* device) {
  GpuRun r;
  r.root = ws;
  r.dir = ws / ".maxcode-gpu" / std::to_string(++gpu_run_counter_);
  make_dirs_beneath(ws, r.dir);  // a link an earlier run planted is not followed
  // Check runs and timed runs get the same environment: a candidate cannot tell
  // whether it is being timed.
  r.env = {{"CUDA_INJECTION64_PATH", cupti_library_}};
  // The records come back through a socket in a directory the benchmark cannot write:
  // files in its workspace it could rewrite after the fact.
  try {
    r.socket = std::make_unique<RecordSocket>();
    r.env.push_back({"MAXCODE_PROFILE_SOCKET", r.socket->path()});
    r.readable_paths = {r.socket->dir()};
  } catch (const std::exception& error) {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::string warning = std::string("GPU records come from files the benchmark could rewrite: ") + error.what();
    if (std::find(warnings_.begin(), warnings_.end(), warning) == warnings_.end()) warnings_.push_back(warning);
    r.env.push_back({"MAXCODE_PROFILE_DIR", r.dir.string()});
  }
  auto pin = device_env(device);
  r.env.insert(r.env.end(), pin.begin(), pin.end());
  return r;
}

RunKernels Evaluator::gpu_records(GpuRun& gpu) {
  if (!gpu.socket) return read_run_kernels(gpu.dir, gpu.root);
  const RecordStreams streams = gpu.socket->finish();
  gpu.socket.reset();
  if (!streams.problems.empty()) throw std::runtime_error(streams.problems.front());
  RunKernels run;
  for (const GpuSummary& summary : streams.summaries) add_summary(run, summary);
  return run;
}

std::string Evaluator::check_gpu_run(std::size_t b, const RunKernels& run, double seconds, bool alone,
                                     const RunKernels* against) const {
  if (run.processes() == 0)
    return "no GPU activity was recorded (CUPTI could not attach, or the program used no CUDA)";
  if (run.dropped > 0)
    return "CUPTI lost " + std::to_string(run.dropped) + " activity records: the kernel time would be incomplete";
  const RunKernels* original = against ? against : original_runs_[b] ? &*original_runs_[b] : nullptr;
  if (original) {
    std::string why = check_against_baseline(*original, run, selections_[b]);
    if (!why.empty()) return why;
    // After: a candidate with no counted kernel at all keeps that plainer reason.
    why = check_launch_audit(*original, run);
    if (!why.empty()) return why;
    why = check_launch_consistency(*original, run, selections_[b], alone);
    if (!why.empty()) return "per-call consistency: " + why;
  }
  if (floors_[b] > 0 && seconds < floors_[b])
    return format_numbers("faster than the hardware allows: %.4f ms of kernel time is below the roofline floor of "
                  "%.4f ms (the declared minimum work at the GPU's peak rates)",
                  seconds * 1e3, floors_[b] * 1e3);
  return {};
}

void Evaluator::prepare_gpu() {
  // The original through each sanitizer tool: a tool it fails already cannot judge a
  // candidate, so it is left out with a warning instead of rejecting everything.
  const std::string sanitizer = find_cuda_tool("compute-sanitizer");
  if (config_.gpu.sanitizer.empty()) {
    // nothing asked for
  } else if (sanitizer.empty()) {
    warnings_.push_back("compute-sanitizer not found: GPU winners are not checked for memory errors and races");
  } else {
    for (const std::string& tool : config_.gpu.sanitizer) {
      progress_.status("baseline: compute-sanitizer " + tool);
      Evaluation scratch;
      scratch.gpu = nlohmann::json::object();
      if (sanitize_with(scratch, baseline_workspace_, {}, &devices_.front(), sanitizer, tool))
        sanitizer_tools_.push_back(tool);
      else
        warnings_.push_back("the original itself fails compute-sanitizer " + tool + " (" + scratch.reason +
                            "): candidates are not checked with it");
    }
  }
  if (config_.gpu.ncu) {
    progress_.status("baseline: Nsight Compute metrics of the top kernels");
    baseline_ncu_ = ncu_metrics(nullptr);
    for (const NcuKernel& k : baseline_ncu_) {
      peak_bytes_per_s_ = std::max(peak_bytes_per_s_, k.peak_bytes_per_s);
      peak_flops_per_s_ = std::max(peak_flops_per_s_, k.peak_flops_per_s);
    }
  }
  for (std::size_t b = 0; b < config_.benchmarks.size(); ++b) {
    const BenchmarkConfig& bench = config_.benchmarks[b];
    if (bench.metric != "kernels" || (bench.roofline_bytes <= 0 && bench.roofline_flops <= 0)) continue;
    if (peak_bytes_per_s_ <= 0) {
      warnings_.push_back("benchmark '" + bench.name + "' declares a roofline, but the GPU's peak rates are "
                          "unknown (they come from Nsight Compute): times below it are not caught");
      continue;
    }
    floors_[b] = roofline_floor_s(bench.roofline_bytes, bench.roofline_flops, peak_bytes_per_s_, peak_flops_per_s_);
  }
}

bool Evaluator::sanitize(Evaluation& e, const fs::path& ws, const std::map<std::string, std::string>& overrides,
                         const GpuDevice* device) {
  const std::string sanitizer = find_cuda_tool("compute-sanitizer");
  for (const std::string& tool : sanitizer_tools_) {
    progress_.status(e.candidate_id + ": compute-sanitizer " + tool);
    if (!sanitize_with(e, ws, overrides, device, sanitizer, tool)) return false;
  }
  return true;
}

bool Evaluator::sanitize_with(Evaluation& e, const fs::path& ws, const std::map<std::string, std::string>& overrides,
                              const GpuDevice* device, const std::string& sanitizer, const std::string& tool) {
  std::vector<std::string> commands;
  if (config_.gpu.sanitize == "test") commands.push_back(config_.test.command);
  else
    for (const BenchmarkConfig& bench : config_.benchmarks) commands.push_back(bench.command);
  for (const std::string& command : commands) {
    auto env = device_env(device);
    env.push_back({"MAXCODE_SEED", std::to_string(config_.acceptance.seeds.front())});
    auto r = run_step(e, "compute-sanitizer " + tool, shell_command(sanitizer_argv(sanitizer, tool, command)), ws,
                      config_.gpu.sanitizer_timeout_s, overrides, env);
    const SanitizerReport report = parse_sanitizer_output(r.outcome.err + "\n" + r.outcome.out, tool);
    nlohmann::json record = {{"tool", tool}, {"command", command}, {"errors", report.errors},
                             {"status", r.outcome.describe()}};
    if (!report.excerpt.empty()) record["excerpt"] = report.excerpt;
    e.gpu["sanitizer"].push_back(record);
    if (!r.tampered.empty()) {
      e.verdict = Verdict::kRejected;
      e.reason = r.tampering("compute-sanitizer");
      return false;
    }
    if (report.errors > 0 || r.outcome.exit_code == kSanitizerErrorExit) {
      e.verdict = Verdict::kRejected;
      e.reason = "compute-sanitizer " + describe(report);
      return false;
    }
    if (!r.outcome.ok() || !report.summary_seen) {
      e.verdict = failure_verdict(r.outcome, Verdict::kCrashed);
      e.reason = "under compute-sanitizer " + tool + ", '" + command + "' " + r.outcome.describe();
      return false;
    }
  }
  return true;
}

std::vector<NcuKernel> Evaluator::ncu_metrics(const Checked* checked) {
  const std::string ncu = find_cuda_tool("ncu");
  if (!gpu_ || !config_.gpu.ncu) return {};
  auto warn = [&](const std::string& what) {
    std::lock_guard<std::mutex> lock(mutex_);
    warnings_.push_back("Nsight Compute: " + what);
    return std::vector<NcuKernel>{};
  };
  if (ncu.empty()) return warn("ncu not found: no hardware metrics for critiques and no roofline check");
  // The first benchmark timed by kernels; its top kernels by counted time.
  std::size_t b = 0;
  while (b < config_.benchmarks.size() && config_.benchmarks[b].metric != "kernels") ++b;
  if (b == config_.benchmarks.size() || !original_runs_[b]) return {};
  std::vector<std::pair<std::uint64_t, std::string>> ranked;
  auto add_kernels = [&](const nlohmann::json& kernels) {
    for (const auto& k : kernels)
      if (k.value("counted", false)) ranked.push_back({k.value("total_ns", std::uint64_t{0}), k.value("name", "")});
  };
  if (checked) add_kernels(checked->evaluation.gpu.value("kernels", nlohmann::json::object()).value("kernels", nlohmann::json::array()));
  else add_kernels(to_json(*original_runs_[b], selections_[b])["kernels"]);
  std::sort(ranked.rbegin(), ranked.rend());
  std::vector<std::string> names;
  for (const auto& [ns, demangled] : ranked) {
    std::string base = function_name_of(demangled);
    if (auto colon = base.rfind("::"); colon != std::string::npos) base = base.substr(colon + 2);
    if (auto angle = base.find('<'); angle != std::string::npos) base = base.substr(0, angle);
    if (!base.empty() && std::find(names.begin(), names.end(), base) == names.end()) names.push_back(base);
    if (static_cast<int>(names.size()) >= config_.gpu.ncu_kernels) break;
  }
  if (names.empty()) return warn("no counted kernel to profile");
  const fs::path ws = checked ? checked->workspace : baseline_workspace_;
  const fs::path log = ws / ".maxcode-gpu" / ("ncu-" + std::to_string(++gpu_run_counter_) + ".csv");
  const BenchmarkConfig& bench = config_.benchmarks[b];
  auto env = device_env(&devices_.front());
  env.push_back({"MAXCODE_SEED", std::to_string(config_.acceptance.seeds.front())});
  Evaluation scratch;
  try {
    make_dirs_beneath(ws, log.parent_path());  // a link an earlier run planted is not followed
  } catch (const std::exception& error) {
    return warn(error.what());
  }
  const int launches = static_cast<int>(names.size()) * 2;
  auto r = run_step(scratch, "ncu", shell_command(ncu_argv(ncu, names, bench.warmup_launches, launches, log.string(), bench.command)),
                    ws, config_.gpu.ncu_timeout_s, checked ? checked->materialized.files : std::map<std::string, std::string>{}, env);
  if (!r.outcome.ok()) return warn("ncu " + r.outcome.describe() + ": " + r.outcome.tail(600));
  try {
    // ncu wrote it inside the workspace, where the benchmark ran alongside.
    std::vector<NcuKernel> kernels = parse_ncu_csv(read_beneath(ws, log, kMaxNcuLogBytes));
    if (kernels.empty()) return warn("no kernel matched " + join(names, ", ") + " in " + bench.command);
    return kernels;
  } catch (const std::exception& error) {
    return warn(error.what());
  }
}

std::optional<std::vector<std::vector<NcuKernel>>> Evaluator::ncu_witness_work(const Side& side,
                                                                                 const GpuDevice* device,
                                                                                 std::string& problem) {
  const std::string ncu = find_cuda_tool("ncu");
  // ncu's durations are held against the session's: measured alone on the GPU too.
  std::optional<TimingLock> alone;
  if (device) alone.emplace(timing_lock_dir(options_.env.lock_dir), device->lock_key());
  std::vector<std::vector<NcuKernel>> runs(config_.benchmarks.size());
  for (std::size_t b = 0; b < config_.benchmarks.size(); ++b) {
    const BenchmarkConfig& bench = config_.benchmarks[b];
    if (bench.metric != "kernels") continue;
    // Timed through the shim: witnessed through it too (its shimmed build, the shim
    // loaded into the benchmark's processes only, not into ncu's own), so that ncu and
    // CUPTI see the same launches in the same state of the caches.
    const bool shimmed = call_baselines_.size() > b && call_baselines_[b] && call_baselines_[b]->shimmed &&
                         !side.calls_workspace.empty();
    const fs::path& ws = shimmed ? side.calls_workspace : side.workspace;
    const std::map<std::string, std::string>& overrides = shimmed ? side.calls_files : side.files;
    std::string command = bench.command;
    std::vector<std::string> readable;
    if (shimmed) {
      const fs::path dir = call_dir(ws) / ("witness-" + std::to_string(b));
      if (const std::string why = prepare_shim_dir(ws, dir, b, reference_key_, false); !why.empty()) {
        problem = "benchmark '" + bench.name + "': " + why;
        return std::nullopt;
      }
      // Added to ncu's own LD_PRELOAD (its injection into the benchmark), never replacing it.
      command = "export MAXCODE_SHIM_DIR=" + shell_quote(dir.string()) + " LD_PRELOAD=" + shell_quote(shim_library_) +
                "${LD_PRELOAD:+:$LD_PRELOAD}; " + bench.command;
      readable.push_back(fs::path(shim_library_).parent_path().string());
    }
    std::uint64_t tag = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      tag = rng_();
    }
    // An unguessable name: the benchmark runs in this workspace while ncu writes it.
    const fs::path log = ws / ".maxcode-gpu" / ("witness-" + std::to_string(++gpu_run_counter_) + "-" +
                                                std::to_string(tag) + ".csv");
    try {
      make_dirs_beneath(ws, log.parent_path());
    } catch (const std::exception& error) {
      problem = "benchmark '" + bench.name + "': " + error.what();
      return std::nullopt;
    }
    auto env = device_env(device);
    env.push_back({"MAXCODE_SEED", std::to_string(config_.acceptance.seeds.front())});
    Evaluation scratch;
    auto r = run_step(scratch, "ncu witness", shell_command(ncu_duration_argv(ncu, log.string(), command)), ws,
                      config_.gpu.ncu_timeout_s, overrides, env, {}, readable);
    std::string text;
    try {
      if (r.tampered.empty() && r.outcome.ok()) text = read_beneath(ws, log, kMaxNcuLogBytes);
    } catch (const std::exception& error) {
      problem = "benchmark '" + bench.name + "': no ncu log (" + error.what() + ")";
    }
    remove_beneath(ws, log);
    if (!r.tampered.empty()) {
      problem = r.tampering("ncu");
      return std::nullopt;
    }
    if (!r.outcome.ok()) {
      problem = "benchmark '" + bench.name + "' " + r.outcome.describe() + " under ncu: " + r.outcome.tail(400);
      return std::nullopt;
    }
    if (!problem.empty()) return std::nullopt;
    try {
      std::vector<NcuKernel> kernels = parse_ncu_csv(text);
      // No kernel and an error of ncu's own (ERR_NVGPUCTRPERM, an unsupported GPU): ncu
      // could not look, which is not the same as there being nothing to see.
      if (const std::size_t at = text.find("==ERROR=="); ncu_work(kernels).launches == 0 && at != std::string::npos) {
        problem = "benchmark '" + bench.name + "': " + text.substr(at, std::min<std::size_t>(text.find('\n', at) - at, 300));
        return std::nullopt;
      }
      runs[b] = std::move(kernels);
    } catch (const std::exception& error) {
      problem = "benchmark '" + bench.name + "': " + error.what();
      return std::nullopt;
    }
  }
  return runs;
}

WitnessRecord Evaluator::witness(Checked& c, const Session& session, double claimed_speedup) {
  const double tolerance = config_.gpu.witness_tolerance;
  WitnessRecord record;
  record.tolerance = tolerance;
  record.claimed_speedup = claimed_speedup;
  auto not_witnessed = [&](const std::string& why) {
    record.status = "not witnessed";
    record.note = why;
    const std::string warning = "winners are not witnessed out of process (gpu.witness): " + why;
    std::lock_guard<std::mutex> lock(mutex_);
    if (std::find(warnings_.begin(), warnings_.end(), warning) == warnings_.end()) warnings_.push_back(warning);
    return record;
  };
  if (find_cuda_tool("ncu").empty()) return not_witnessed("Nsight Compute (ncu) not found");

  // CUPTI's side: each version's last run in the A/B session being judged, read with
  // the timer's kernel selection; ncu's: a run of each version under it. Both are
  // summed over the kernel benchmarks, as the timer sums their counted kernel time.
  std::vector<std::size_t> kernel_benchmarks;
  for (std::size_t b = 0; b < config_.benchmarks.size(); ++b) {
    if (config_.benchmarks[b].metric != "kernels") continue;
    if (b >= session.baseline_runs.size() || !session.baseline_runs[b] || b >= session.candidate_runs.size() ||
        !session.candidate_runs[b])
      return not_witnessed("the A/B session kept no CUPTI record of benchmark '" +
                           config_.benchmarks[b].name + "'");
    kernel_benchmarks.push_back(b);
  }
  // Each version's side, from ncu's kernels per benchmark (none: CUPTI's figures only).
  auto sides = [&](const std::vector<std::vector<NcuKernel>>* ncu, const std::vector<std::optional<RunKernels>>& runs) {
    static const std::vector<NcuKernel> none;
    std::vector<WitnessSide> each;
    for (std::size_t b : kernel_benchmarks)
      each.push_back(witness_side(ncu && b < ncu->size() ? (*ncu)[b] : none, *runs[b], selections_[b]));
    return sum_sides(each);
  };

  // ncu's side: the original once per evaluator, the candidate once (at timing).
  std::vector<std::vector<NcuKernel>> original_ncu;
  {
    std::lock_guard<std::mutex> lock(witness_mutex_);
    if (!witness_original_tried_) {
      witness_original_tried_ = true;
      progress_.status("baseline: out-of-process witness (Nsight Compute, every kernel)");
      witness_original_ = ncu_witness_work(baseline_side(), session.device, witness_original_problem_);
    }
    if (!witness_original_) return not_witnessed("the original under ncu: " + witness_original_problem_);
    original_ncu = *witness_original_;
  }
  const WitnessSide original = sides(&original_ncu, session.baseline_runs);
  record.original = original;
  if (std::string why = check_original_witness(original, tolerance); !why.empty()) return not_witnessed(why);

  std::string problem;
  if (!c.witness_ncu) c.witness_ncu = ncu_witness_work(side_of(c), session.device, problem);
  if (!c.witness_ncu) {
    // The original ran under ncu: a candidate that cannot is not witnessed, and so
    // cannot win.
    record.candidate = sides(nullptr, session.candidate_runs);
    record.status = "rejected";
    record.note = "out-of-process witness (Nsight Compute): " + problem;
    return record;
  }
  const WitnessSide candidate = sides(&*c.witness_ncu, session.candidate_runs);
  // A claim that also covers benchmarks timed by wall clock cannot be set against
  // kernel time: only the records are compared then.
  const bool all_kernels = std::all_of(config_.benchmarks.begin(), config_.benchmarks.end(),
                                       [](const BenchmarkConfig& bench) { return bench.metric == "kernels"; });
  return judge_witness(original, candidate, all_kernels ? claimed_speedup : 0, tolerance);
}

}  // namespace maxcode

#include "runner/profile/profile_run.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

#include "runner/core/candidate_env.h"
#include "runner/core/command_limits.h"
#include "runner/util/files.h"
#include "runner/util/process.h"
#include "runner/instrument/google_benchmark.h"
#include "runner/profile/benchmark_entries.h"
#include "runner/profile/bound.h"
#include "runner/profile/collect.h"
#include "runner/instrument/inject_paths.h"
#include "runner/workspace/workspace.h"

namespace maxcode {

namespace fs = std::filesystem;

namespace {

// Extra seconds past a benchmark's limit before the hard kill: the SIGTERM that ends
// it first lets the sampler write its file, and CUPTI's last snapshot is on disk.
constexpr double kGraceS = 10;

// The child's inherited value with `extra` appended: passed through, not configuration.
std::string with_env(const char* name, const std::string& extra) {
  const char* current = std::getenv(name);
  return current && *current ? std::string(current) + " " + extra : extra;
}

// Owns the temporary directory of one profile run.
struct WorkDir {
  fs::path path;
  bool keep = false;
  ~WorkDir() {
    if (!keep && !path.empty()) remove_workspace(path);
  }
};

// The user's build and benchmarks run as candidates do: sandboxed, with an
// allow-listed environment (no model keys, no tokens) and HOME in the work directory.
Command step(const std::string& shell, const fs::path& cwd, double timeout_s, const Config& config,
             const std::vector<std::string>& writable, const EnvVars& env) {
  Command cmd;
  cmd.env = candidate_env(config, process_environment(), fs::path(writable.front()) / "home", env);
  cmd.parent_env = ParentEnv::kDrop;
  cmd.shell = shell;
  cmd.cwd = cwd.string();
  cmd.timeout_s = timeout_s;
  cmd.output_cap = config.workspace.output_cap_bytes;
  cmd.isolate = config.workspace.isolate;
  apply_workspace_limits(cmd, config.workspace);
  cmd.writable_paths = writable;
  cmd.readable_paths = config.workspace.sandbox_paths;
  // Run by root, the sandbox runs the command as an unprivileged user: it must be able
  // to write the work directory (the first writable path; the copy is inside it). A
  // repository profiled in place stays its owner's.
  if (cmd.isolate) hand_to_sandbox_user(writable.front());
  return cmd;
}

std::string describe(const Outcome& outcome, double limit_s) {
  // `timeout` reports the end it caused as 124; 128+N is a signal the child died of.
  if (outcome.exit_code == 124 && !outcome.timed_out) {
    char text[64];
    std::snprintf(text, sizeof text, "timed out after %.1f s", limit_s);
    return text;
  }
  const std::string text = outcome.describe();
  if (outcome.exit_code > 128 && outcome.exit_code < 128 + 65 && text.find("signal") == std::string::npos) {
    const char* name = sigabbrev_np(outcome.exit_code - 128);
    return text + (name ? std::string(" (killed by SIG") + name + ")" : "");
  }
  return text;
}

void build(const fs::path& root, const Config& config, const ProfileOptions& o,
           const std::vector<std::string>& writable, Progress& progress) {
  std::vector<std::pair<std::string, std::string>> env{{"MAXCODE_WORKSPACE", root.string()}};
  if (o.debug_flags) {
    // Names, lines and call stacks need debug info and frame pointers. Flags that
    // change no code generation (-g) or little (frame pointers); build systems that
    // read CFLAGS & co. (CMake, autotools, plain make) pick them up. GCC leaves
    // leaf functions without a frame unless told, which hides their caller.
    const std::string flags = "-g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer";
    env.push_back({"CFLAGS", with_env("CFLAGS", flags)});
    env.push_back({"CXXFLAGS", with_env("CXXFLAGS", flags)});
    env.push_back({"CUDAFLAGS", with_env("CUDAFLAGS", "-g -lineinfo -Xcompiler=-fno-omit-frame-pointer,-mno-omit-leaf-frame-pointer")});
  }
  for (const auto& [label, shell] : {std::pair<std::string, std::string>{"configure", config.build.configure},
                                     {"build", config.build.command}}) {
    if (shell.empty()) continue;
    progress.status("profile: " + label + ": " + shell);
    Command cmd = step(shell, root, config.build.timeout_s, config, writable, env);
    Outcome outcome = run(cmd);
    if (!outcome.ok())
      throw ProfileError(label + " failed: " + outcome.describe() + "\n" + outcome.tail(3000));
  }
}

constexpr int kMaxProfileRounds = 6;
constexpr double kProfileBudgetS = 60;  // more rounds while under this (or twice the first)

struct RankingCheck {
  bool settled = true;
  std::string why;  // when not settled: which two entries, with their samples
};

// Whether the order of the top entries in scope (those that may become targets, 5% of
// the time or more, at most four) stands clear of sampling error: each adjacent pair's
// sample counts a >= b differ by at least two standard deviations of their difference
// (a - b >= 2 sqrt(a + b), counts taken as Poisson), and the top one has 20 samples.
RankingCheck check_ranking(const std::vector<ProfileEntry>& functions) {
  std::vector<const ProfileEntry*> top;
  for (const ProfileEntry& e : functions)
    if (e.in_scope && !e.external && e.share >= 0.05 && top.size() < 4) top.push_back(&e);
  RankingCheck check;
  if (top.empty()) return check;
  if (top.front()->samples == 0) return check;  // not sampled (imported counts): nothing to settle
  if (top.front()->samples < 20) {
    check.settled = false;
    check.why = top.front()->function + " has " + std::to_string(top.front()->samples) + " samples";
    return check;
  }
  for (std::size_t i = 0; i + 1 < top.size(); ++i) {
    const double a = static_cast<double>(top[i]->samples), b = static_cast<double>(top[i + 1]->samples);
    if (a - b < 2 * std::sqrt(a + b)) {
      check.settled = false;
      check.why = top[i]->function + " (" + std::to_string(top[i]->samples) + " samples) and " +
                  top[i + 1]->function + " (" + std::to_string(top[i + 1]->samples) +
                  ") are within sampling error";
      return check;
    }
  }
  return check;
}

}  // namespace

BuiltCopy build_for_profiling(const ProfileOptions& o, const Config& config, const fs::path& dir, Progress& progress) {
  progress.status("profile: copying the repository");
  SourceSnapshot source = capture_source(o.repo, dir / "source", config.workspace.exclude);
  BuiltCopy copy{dir / "ws", source.commit};
  create_workspace(source, copy.root);
  build(copy.root, config, o, {dir.string(), copy.root.string()}, progress);
  return copy;
}

namespace {

// One profile of a repository's benchmarks: each run once under the profilers, then
// again while the ranking of the hottest functions is not settled (within a budget).
class ProfileSession {
 public:
  ProfileSession(const ProfileOptions& o, const Config& config, Progress& progress)
      : o_(o),
        config_(config),
        progress_(progress),
        work_{make_unique_dir(fs::temp_directory_path(), "maxcode-profile-"), o.keep_workspaces} {}

  Profile run();

 private:
  void prepare_libraries();
  // One run of benchmark i under the profilers, its records added to collected_. The
  // first round's runs are the ones reported; later rounds only add samples.
  void profile_once(std::size_t i, int round);
  EnvVars run_env(const BenchmarkConfig& bench, const fs::path& dir) const;
  // A Google Benchmark program's samples weighed by each entry's part of the metric,
  // before they join the rest.
  void weigh_entries(const BenchmarkConfig& bench, const fs::path& file, Collected& own);
  void keep_first_run(const BenchmarkConfig& bench, BenchmarkRun r);
  // Runs the benchmarks again while the ranking is not settled; the rounds made.
  int settle(Profile& ranked, const CodeOrigin& origin, std::chrono::steady_clock::time_point started);

  const ProfileOptions& o_;
  const Config& config_;
  Progress& progress_;
  WorkDir work_;
  fs::path root_;
  std::string commit_;
  std::vector<std::string> writable_;
  std::string sampler_, cupti_;
  bool have_timeout_ = false;
  std::vector<std::string> warnings_;
  Collected collected_;
  std::vector<BenchmarkRun> runs_;
  // Google Benchmark programs: per benchmark, per function, the entries it drives
  // (runner/profile/benchmark_entries.h), over all rounds.
  std::map<std::string, std::map<std::string, std::set<std::string>>> drives_;
  std::set<std::string> weighting_notes_;
  RankingCheck check_;
};

void ProfileSession::prepare_libraries() {
  // The libraries travel into the work directory: a sandbox shows the program a
  // private /tmp, where a build tree of maxcode itself may live.
  InjectLibraries libs = find_inject_libraries();
  if (!libs.sampler.empty())
    sampler_ = copy_into_work_dir(libs.sampler, work_.path);
  else
    warnings_.push_back("the CPU sampler (libmaxcode_sampler.so) was not found beside maxcode: no CPU profile");
  if (!libs.cupti.empty())
    cupti_ = copy_into_work_dir(libs.cupti, work_.path);
  else
    warnings_.push_back("this maxcode was built without CUPTI: GPU kernels are not profiled");
  Command probe;
  probe.shell = "command -v timeout";
  probe.timeout_s = 5;
  have_timeout_ = maxcode::run(probe).ok();
}

EnvVars ProfileSession::run_env(const BenchmarkConfig& bench, const fs::path& dir) const {
  const auto& seeds = config_.acceptance.seeds;
  EnvVars env = {{"MAXCODE_PROFILE_DIR", dir.string()},
                 {"MAXCODE_WORKSPACE", root_.string()},
                 {"MAXCODE_SEED", std::to_string(seeds.empty() ? 1 : seeds.front())}};
  if (!sampler_.empty()) {
    const char* preload = std::getenv("LD_PRELOAD");  // the child's own preloads stay, after ours
    env.push_back({"LD_PRELOAD", preload && *preload ? sampler_ + ":" + preload : sampler_});
  }
  if (!cupti_.empty()) env.push_back({"CUDA_INJECTION64_PATH", cupti_});
  if (bench.metric == "google-benchmark")
    for (auto& [name, value] : google_benchmark_env(dir / "google-benchmark.json", bench.filter))
      env.push_back({name, value});
  return env;
}

void ProfileSession::profile_once(std::size_t i, int round) {
  const BenchmarkConfig& bench = config_.benchmarks[i];
  progress_.status("profile: running " + bench.name + ": " + bench.command);
  const fs::path dir = work_.path / "profiles" / (std::to_string(i) + (round ? "-" + std::to_string(round) : ""));
  fs::create_directories(dir);
  // SIGTERM at the benchmark's own limit, so that the profilers still write. The shell
  // between `timeout` and the benchmark traps TERM, and so waits for the benchmark to
  // finish writing: `timeout` ends when its child does, and every process still running
  // is killed at that moment.
  const std::string shell = have_timeout_ ? "exec timeout -s TERM -k 5 " + std::to_string(bench.timeout_s) +
                                                " /bin/sh -c " + shell_quote("trap : TERM; " + bench.command)
                                          : bench.command;
  Command cmd = step(shell, root_, bench.timeout_s + kGraceS, config_, writable_, run_env(bench, dir));
  const Outcome outcome = maxcode::run(cmd);

  BenchmarkRun r;
  r.name = bench.name;
  r.command = bench.command;
  r.wall_s = outcome.wall_s;
  if (!outcome.ok()) {
    r.outcome = describe(outcome, bench.timeout_s);
    r.output_tail = outcome.tail(2000);
    progress_.note("benchmark " + bench.name + ": " + r.outcome + " (what was recorded until then is kept)");
  }
  Collected own;
  collect_run_directory(dir, own, r);
  if (bench.metric == "google-benchmark" && own.have_cpu) weigh_entries(bench, dir / "google-benchmark.json", own);
  merge_collected(collected_, std::move(own));
  if (round > 0) {
    runs_[i].samples += r.samples;
    runs_[i].dropped += r.dropped;
    return;
  }
  keep_first_run(bench, std::move(r));
}

void ProfileSession::weigh_entries(const BenchmarkConfig& bench, const fs::path& file, Collected& own) {
  try {
    const EntryWeighting w = weigh_by_entries(own.cpu, read_google_benchmark(file.parent_path(), file));
    for (const auto& [function, entries] : w.drives)
      drives_[bench.name][function].insert(entries.begin(), entries.end());
    if (w.applied)
      weighting_notes_.insert("benchmark " + bench.name +
                              ": a Google Benchmark program, its samples weighed by "
                              "each entry's part of the metric (times per iteration): its functions' shares are "
                              "of the metric, not of CPU time");
    if (!w.note.empty()) weighting_notes_.insert("benchmark " + bench.name + ": " + w.note);
  } catch (const std::exception& error) {
    weighting_notes_.insert("benchmark " + bench.name + ": its entries' times could not be read (" +
                            std::string(error.what()) + "): its functions are ranked by CPU time");
  }
}

void ProfileSession::keep_first_run(const BenchmarkConfig& bench, BenchmarkRun r) {
  const Boundness b = classify_boundness(r.wall_s, r.gpu_window_s, r.gpu_busy_s, r.kernel_launches, r.gpu_kernel_s,
                                         r.gpu_processes > 0 && (r.kernel_launches > 0 || r.gpu_transfer_s > 0));
  r.bound = b.kind;
  r.bound_reason = b.reason;
  const std::string name = "benchmark " + bench.name + ": ";
  if (r.gpu_processes > 0 && r.kernel_launches == 0)
    warnings_.push_back(name + "the program initialized CUDA but ran no kernels");
  if (r.samples == 0)
    warnings_.push_back(name +
                        "no CPU samples (it ran for less than a few milliseconds of CPU time, or the sampler "
                        "could not load)");
  else if (r.dropped * 100 > r.samples)
    warnings_.push_back(name + std::to_string(r.dropped) + " of " + std::to_string(r.samples) +
                        " samples dropped (stack table full)");
  if (r.gpu_dropped > 0)
    warnings_.push_back(name + "CUPTI dropped " + std::to_string(r.gpu_dropped) +
                        " activity records: kernel times are too low");
  runs_.push_back(std::move(r));
}

// A CPU profile is sampled: the benchmarks run again until the order of the top
// functions in scope stands clear of sampling error (CI once chose targets from 13
// samples, and the second target had none), within a budget. GPU kernel times are
// measured, not sampled, and a program that failed is not run again.
int ProfileSession::settle(Profile& ranked, const CodeOrigin& origin, std::chrono::steady_clock::time_point started) {
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(); };
  const double first_round_s = elapsed();
  int rounds = 1;
  bool repeatable = true;
  for (const BenchmarkRun& r : runs_) repeatable = repeatable && r.outcome == "ok" && r.kernel_launches == 0;
  check_ = check_ranking(ranked.functions);
  while (repeatable && !check_.settled && rounds < kMaxProfileRounds &&
         elapsed() + first_round_s <= std::max(kProfileBudgetS, 2 * first_round_s)) {
    progress_.status("profile: " + check_.why + "; running the benchmarks again (round " + std::to_string(rounds + 1) +
                     ")");
    for (std::size_t i = 0; i < config_.benchmarks.size(); ++i) profile_once(i, rounds);
    ++rounds;
    ranked = rank_profile(collected_, origin);
    check_ = check_ranking(ranked.functions);
  }
  if (rounds > 1) {
    // Times per run, as after one round; samples stay the count over all rounds.
    ranked.cpu_total /= rounds;
    for (ProfileEntry& e : ranked.functions) {
      e.self /= rounds;
      e.total /= rounds;
    }
  }
  return rounds;
}

Profile ProfileSession::run() {
  if (config_.benchmarks.empty()) throw ProfileError("the config names no benchmark to profile");
  root_ = fs::absolute(o_.repo).lexically_normal();
  writable_ = {work_.path.string()};
  if (o_.build) {
    const BuiltCopy copy = build_for_profiling(o_, config_, work_.path, progress_);
    commit_ = copy.commit;
    root_ = copy.root;
  }
  writable_.push_back(root_.string());
  prepare_libraries();
  const auto started = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < config_.benchmarks.size(); ++i) profile_once(i, 0);

  // Recorded paths name the workspace; the user knows the repository.
  CodeOrigin origin({root_, o_.repo}, config_.scope);
  Profile ranked = rank_profile(collected_, origin);
  const int rounds = settle(ranked, origin, started);
  for (ProfileEntry& e : ranked.functions)
    for (const auto& [bench, by_function] : drives_)
      if (auto at = by_function.find(e.name); at != by_function.end())
        e.benchmark_entries[bench].assign(at->second.begin(), at->second.end());
  warnings_.insert(warnings_.end(), weighting_notes_.begin(), weighting_notes_.end());
  if (!check_.settled)
    warnings_.push_back("the order of the hottest functions is not settled after " + std::to_string(rounds) +
                        " run(s) of the benchmarks: " + check_.why);
  else if (rounds > 1)
    progress_.note("profile: the order of the hottest functions settled after " + std::to_string(rounds) + " runs");
  ranked.warnings.insert(ranked.warnings.begin(), warnings_.begin(), warnings_.end());
  ranked.runs = std::move(runs_);
  ranked.repository = fs::absolute(o_.repo).lexically_normal().string();
  ranked.commit = commit_;
  if (o_.keep_workspaces) progress_.note("profile files kept in " + work_.path.string());
  return ranked;
}

}  // namespace

Profile profile_benchmarks(const ProfileOptions& o, const Config& config, Progress& progress) {
  return ProfileSession(o, config, progress).run();
}

Profile profile_imports(const ProfileOptions& o, const ScopeConfig& scope) {
  Collected collected;
  for (const auto& file : o.imports) collect_file(file, collected);
  CodeOrigin origin({o.repo}, scope);
  Profile profile = rank_profile(collected, origin);
  profile.repository = fs::absolute(o.repo).lexically_normal().string();
  return profile;
}

}  // namespace maxcode

// The project file `.maxcode.json`: how to build, test and benchmark a repository, what
// may be changed, and how to search. Parsed strictly: a wrong type, an unknown field or
// a missing command is an error naming the file and the field, never a silent default.
// docs/configuration.md documents every field; keep the two in step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/core/search_choices.h"
#include "runner/core/varying_field.h"
#include "runner/util/error.h"

namespace maxcode {

class ConfigError : public Error {
 public:
  using Error::Error;
};

struct BuildConfig {
  std::string configure;  // optional; run once before `command`
  std::string command;    // required
  double timeout_s = 1800;

  bool operator==(const BuildConfig&) const = default;
};

struct TestConfig {
  std::string command;  // required
  double timeout_s = 600;

  bool operator==(const TestConfig&) const = default;
};

struct BenchmarkConfig {
  std::string name;     // required, unique
  std::string command;  // required
  // "wall": wall time of the whole command; "kernels": GPU time of its kernels from
  // CUPTI records on every stream (docs/evaluation.md "GPU timing"); "google-benchmark":
  // the times a Google Benchmark program writes to its JSON output
  // (runner/instrument/google_benchmark.h).
  std::string metric = "wall";
  bool compare_output = true;   // compare stdout with the baseline's, per seed; "google-benchmark": false
  double rtol = 1e-6;
  double atol = 0;
  double timeout_s = 300;
  // Numbers of the output left out of every comparison (timings it prints): found by
  // the evaluator on every run, and kept here by `maxcode init` so that a run in which
  // the original's timings happen to agree still leaves them out.
  std::vector<VaryingField> varying;
  std::vector<std::string> kernels;  // "kernels": regexes over demangled names; empty = all
  int warmup_launches = 1;           // "kernels": first launches of each kernel left out
  double roofline_bytes = 0;         // minimum DRAM bytes the counted launches move; 0 = unknown
  double roofline_flops = 0;         // minimum FLOPs they execute; 0 = unknown
  // "google-benchmark": the program's own --benchmark_filter (a regex over entry names),
  // given as BENCHMARK_FILTER to every run; empty: every entry. A job sets it per target
  // to the entries the target drives (runner/profile/benchmark_entries.h).
  std::string filter;

  bool operator==(const BenchmarkConfig&) const = default;
};

struct ScopeConfig {
  std::vector<std::string> include{"**"};  // globs relative to the repository root
  std::vector<std::string> exclude;

  bool operator==(const ScopeConfig&) const = default;
};

// `targets.unit`: functions of the target's file to put into its unit, or keep out of it,
// beyond what its calls reach (runner/workspace/unit.h).
struct UnitConfig {
  std::vector<std::string> add;        // also in the unit, with what they call
  std::vector<std::string> leave_out;  // never in it, and not followed

  bool operator==(const UnitConfig&) const = default;
};

struct TargetsConfig {
  std::vector<std::string> functions;  // names (qualified allowed)
  std::string signature;               // optional: picks one overload
  // With no function named: which profile list a target comes from first, "gpu" (a hot
  // kernel, through its launcher) or "cpu" (a hot function); empty: the entry with the
  // larger share of its own list.
  std::string prefer;
  // Optional: element counts of the target's pointer parameters, as products of its
  // integer parameters and literals ("in": "width*height"). The call check uses them to
  // perturb inputs and poison outputs between calls (docs/evaluation.md).
  std::map<std::string, std::string> interface;
  UnitConfig unit;

  bool operator==(const TargetsConfig&) const = default;
};

struct KnobConfig {
  std::string name;                 // a #define or constexpr in `file`
  std::vector<std::string> values;  // at least one
  std::string file;                 // optional: default is the target's file

  bool operator==(const KnobConfig&) const = default;
};

struct SearchConfig {
  SearchPolicy policy = SearchPolicy::kTune;
  int max_evaluations = 32;     // candidates evaluated (duplicates not counted)
  int batch = 4;                // n: candidates built and checked in parallel per step
  int proposals = 0;            // k: proposed per step, reranked down to n; 0 = batch
  long max_tokens = 0;          // LLM token budget; 0 = none
  double max_dollars = 0;       // LLM cost budget (llm.*.price); 0 = none
  CriticChoice critic = CriticChoice::kAuto;
  RerankerChoice reranker = RerankerChoice::kAuto;
  int trajectory_window = 8;    // earlier attempts shown to the maxcode policy
  std::string replay_dir;       // for "replay"; relative to the repository root
  std::vector<KnobConfig> knobs;
  std::uint64_t seed = 1;       // random choices of the search
  double max_wall_s = 3600;     // whole search

  bool operator==(const SearchConfig&) const = default;
};

struct AcceptanceConfig {
  double min_speedup = 1.05;
  std::vector<std::uint64_t> seeds{1234567, 2718281, 3141592};  // MAXCODE_SEED values, >= 3
  int warmup_rounds = 1;
  int min_rounds = 10;
  int max_rounds = 40;
  double max_timing_s = 120;          // per A/B session, after min_rounds
  double target_relative_width = 0.03;  // stop adding rounds once (high-low)/median is below

  bool operator==(const AcceptanceConfig&) const = default;
};

struct WorkspaceConfig {
  // Top-level paths not copied into candidate workspaces (build outputs, caches).
  std::vector<std::string> exclude{"build", ".maxcode"};
  std::size_t output_cap_bytes = 16u << 20;
  bool isolate = true;  // run candidate steps in a sandbox (bubblewrap / namespaces / unshare)
  // Variables passed to candidate commands beyond the built-in allow-list (names, or
  // prefixes ending in '*'); a name that looks secret is a config error.
  std::vector<std::string> env_allow;
  // Host paths (absolute) the sandbox shows read-only to every command, beyond the
  // system's directories and the workspace: a toolchain or SDK outside /usr and /opt,
  // an installed package the build finds (find_package), data the benchmarks read.
  std::vector<std::string> sandbox_paths;
  // What one command of a run (a build, the tests, a benchmark) may take of the machine,
  // 0 = no limit (docs/configuration.md): processes at once, memory (0 here: half of the
  // machine's), both of all the command's processes together where a cgroup can be made
  // (else per user and per process), what the workspace may grow by, and CPU time of all
  // its processes together (cgroups only; 0: the step's timeout bounds it).
  long max_processes = 1024;
  std::size_t max_memory_mb = 0;
  std::size_t max_disk_mb = 8192;
  double max_cpu_s = 0;

  bool operator==(const WorkspaceConfig&) const = default;
};

// GPU checks of candidates whose benchmarks use the "kernels" metric.
struct GpuConfig {
  std::vector<std::string> sanitizer{"memcheck", "racecheck"};  // tools run on would-be winners
  std::string sanitize = "test";  // what runs under them: "test" | "benchmarks"
  double sanitizer_timeout_s = 600;
  bool ptxas_report = true;       // collect -Xptxas -v through NVCC_APPEND_FLAGS
  bool ncu = true;                // Nsight Compute metrics for the baseline and the winner
  int ncu_kernels = 3;            // top kernels profiled
  double ncu_timeout_s = 600;       // also the limit of one witness run
  // The out-of-process witness (docs/evaluation.md): every winner and the original
  // timed by ncu too, its kernel launches and time held against CUPTI's records.
  bool witness = true;
  double witness_tolerance = 0.25;  // relative: ncu and CUPTI differ by 10-20% on ~20 us kernels

  bool operator==(const GpuConfig&) const = default;
};

struct Config {
  std::filesystem::path file;  // where it was read from (for messages)
  BuildConfig build;
  TestConfig test;
  std::vector<BenchmarkConfig> benchmarks;  // at least one
  ScopeConfig scope;
  TargetsConfig targets;
  SearchConfig search;
  AcceptanceConfig acceptance;
  WorkspaceConfig workspace;
  GpuConfig gpu;
  nlohmann::json llm;  // kept as given; read by the LLM providers

  bool operator==(const Config&) const = default;
};

// The fields each object of `.maxcode.json` may have, by the object's place: "" is the
// document, "build" its build object, "benchmarks[]" each benchmark, "search.knobs[]"
// each knob. The reader rejects any other field; the JSON Schema that editors use
// (docs/schema/maxcode.schema.json) names the same ones, and a test keeps them equal.
// Objects with free keys (targets.interface, llm) are not listed.
const std::map<std::string, std::vector<std::string_view>>& config_fields();

// Reads and validates `file`: JSON with `//` and `/* */` comments and an optional
// "$schema" (for editors). Errors read "<file>: <field path>: <problem>", e.g.
// ".maxcode.json: build.comand: unknown field (did you mean 'command'?)".
Config load_config(const std::filesystem::path& file);

// Adds the replay directory `dir` (relative to `repo`, or absolute) to scope.exclude
// when it lies inside the repository: replay candidates are copies of the target and
// never part of what a search may change or where the target is looked up (a target
// "defined 4 times" otherwise). Idempotent; a directory outside the repository is left.
void keep_out_of_scope(ScopeConfig& scope, const std::filesystem::path& repo, const std::filesystem::path& dir);
Config parse_config(const nlohmann::json& document, const std::string& file_label);

nlohmann::json to_json(const Config& config);
// A benchmark's `varying` as the config writes it (`maxcode init` adds the fields it found).
nlohmann::json varying_json(const std::vector<VaryingField>& fields);

// True when any benchmark is timed by its kernels: the GPU checks apply.
bool uses_gpu_timing(const Config& config);

}  // namespace maxcode

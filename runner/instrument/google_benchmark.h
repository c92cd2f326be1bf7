// The "google-benchmark" metric: a repository's own Google Benchmark program, run as it
// is, timed by the figures it writes to its JSON output.
//
// Such a program picks its own iteration counts, so its wall time hardly changes when
// the code gets faster; its per-iteration times do. The evaluator sets BENCHMARK_OUT
// and BENCHMARK_OUT_FORMAT (the library reads every --benchmark_* flag from the
// environment too), so the command stays the user's and any wrapper script keeps
// working. Its stdout is a table of times, so correctness comes from the tests.
//
// Known limit: the figures are measured inside the benchmark process, where candidate
// code also runs; a candidate that wrote the file itself would go unseen by this metric
// (the tests and the scope rule still apply). docs/evaluation.md says so.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace maxcode {

// One benchmark of the program (repetitions averaged), times per iteration.
struct GoogleBenchmarkEntry {
  std::string name;
  double real_s = 0;   // wall time per iteration
  double cpu_s = 0;    // CPU time per iteration
  long long iterations = 0;
  int repetitions = 0;
};

struct GoogleBenchmarkRun {
  std::vector<GoogleBenchmarkEntry> entries;  // in the order the program ran them
  // The figure timed: the sum over benchmarks of the real time per iteration. Real
  // time, not CPU time: the library's CPU time is the benchmark thread's, and work that
  // a candidate moves to another thread would escape it.
  double seconds() const;
};

// The environment that makes a Google Benchmark program write `json_file`, and run only
// the entries `filter` matches (BENCHMARK_FILTER; empty: all).
std::vector<std::pair<std::string, std::string>> google_benchmark_env(const std::filesystem::path& json_file,
                                                                      const std::string& filter = "");

// A --benchmark_filter matching exactly these entry names (their regex characters
// escaped): "^(BM_a/8|BM_b<int>)$".
std::string google_benchmark_filter(const std::vector<std::string>& entries);

// Reads the JSON a run wrote, beneath `root`, the directory the run could write (its
// workspace): a link at the file or on its way there is refused, never followed, and
// the file is at most kMaxGoogleBenchmarkBytes (util/beneath.h). Throws
// std::runtime_error naming the file when it is missing (not a Google Benchmark
// program?), unreadable, reports an error_occurred benchmark, or lists no benchmark;
// throws BeneathError (a std::runtime_error) when it, or a directory on its way, is a
// link, not a regular file, or too large.
inline constexpr std::size_t kMaxGoogleBenchmarkBytes = 64u << 20;
GoogleBenchmarkRun read_google_benchmark(const std::filesystem::path& root, const std::filesystem::path& json_file);
GoogleBenchmarkRun parse_google_benchmark(const nlohmann::json& document, const std::string& label);

nlohmann::json to_json(const GoogleBenchmarkRun& run);

}  // namespace maxcode

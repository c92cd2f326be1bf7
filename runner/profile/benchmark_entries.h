// A Google Benchmark program in a profile: which of its entries each sample was taken
// in, and the weight each entry has in what the metric counts.
//
// The metric ("google-benchmark", runner/instrument/google_benchmark.h) sums the
// entries' times per iteration, while the library runs every entry for about the same
// wall time: sampled CPU time says how often code ran, not how much of the metric it
// makes. In a time-zone library, two entries that load zone files were 97% of the
// metric; the function chosen by CPU share drove 0.006% of it, and no rewrite of it
// could ever have been measured. So a profile of such a program weighs each entry's
// samples by the entry's part of the metric, and records, per function, the entries it
// drives; a target is then timed on those entries only (BenchmarkConfig::filter).
//
// A sample belongs to the entry whose benchmark function is on its stack: "BM_sum" for
// the entries "BM_sum/1000" and "BM_sum/100000" (entries of one function are one group:
// their samples cannot be told apart), "BM_f<int>" for "BM_f<int>/8", and a fixture's
// "Fix_Case_Benchmark::BenchmarkCase" for "Fix/Case". Entries registered through a
// lambda name no function of their own; when less than half of the samples can be
// placed, the profile stays by CPU time and says so.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "runner/core/config.h"
#include "runner/instrument/google_benchmark.h"
#include "runner/profile/call_stacks.h"

namespace maxcode {

// Entries of one benchmark function, timed and sampled together.
struct EntryGroup {
  std::string function;              // the benchmark function's name as entries spell it: "BM_sum"
  std::vector<std::string> entries;  // the entry names: "BM_sum/1000", ...
  double metric_s = 0;               // their real time per iteration, summed
  double sampled = 0;                // the stacks' weight in them, before reweighting
};

struct EntryWeighting {
  std::vector<EntryGroup> groups;
  double metric_s = 0;      // all entries' real time per iteration
  double unplaced = 0;      // weight of stacks in no entry (setup, the library, main)
  double total = 0;         // weight of all stacks, before
  bool applied = false;     // the stacks were reweighted
  std::string note;         // why not, or what was left out; empty when nothing to say
  // Per function (CodeFrame::function, parameters included): the entries where it holds
  // at least kDrivesShare of the entry's samples, in the program's order.
  std::map<std::string, std::vector<std::string>> drives;
};

inline constexpr double kDrivesShare = 0.01;

// Places `stacks` in the entries of `run`, and (when at least half of the weight can be
// placed) scales each group's stacks to its part of the metric, keeping the total, and
// sets the stacks in no entry to zero: they are not in the metric.
EntryWeighting weigh_by_entries(CallStacks& stacks, const GoogleBenchmarkRun& run);

// Sets each Google Benchmark program's filter to the entries `entries` names for it
// (benchmark name -> entry names, as ProfileEntry::benchmark_entries), unless the config
// gives one already; returns a line per benchmark so filtered, for people.
std::vector<std::string> time_driven_entries(std::vector<BenchmarkConfig>& benchmarks,
                                             const std::map<std::string, std::vector<std::string>>& entries);

}  // namespace maxcode

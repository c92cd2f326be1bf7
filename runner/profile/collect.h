// Turning profile files into one ranked Profile: the files the injected profilers
// wrote for a benchmark run, or files a user already has (perf script, callgrind,
// gperftools, maxcode's own). Two rankings: kernels by share of all GPU time recorded,
// functions by share of all CPU time sampled.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "runner/profile/call_stacks.h"
#include "runner/instrument/gpu_activity.h"
#include "runner/profile/origin.h"
#include "runner/profile/profile.h"

namespace maxcode {

// Profiles read so far, before ranking.
struct Collected {
  CallStacks cpu;
  bool have_cpu = false;
  std::vector<GpuSummary> gpu;
  std::vector<std::string> warnings;
};

// What one benchmark's profile directory held (cpu-*.txt, gpu-*.json), added to
// `into`; per-run facts (processes, samples, GPU time, partial files) go to `run`.
// A file that cannot be read becomes a warning, never the end of the profile.
void collect_run_directory(const std::filesystem::path& dir, Collected& into, BenchmarkRun& run);

// Adds `from` (one run's directory read apart, to be weighed first: runner/profile/
// benchmark_entries.h) to `into` as collect_run_directory would have: stacks of one
// unit, each warning once.
void merge_collected(Collected& into, Collected from);

// One file of any supported format (detected from its content), added to `into`.
// Throws ProfileFormatError (naming the line or byte) when it cannot be read, and
// std::runtime_error when its unit cannot be combined with what is there.
void collect_file(const std::filesystem::path& file, Collected& into);

// Ranks everything collected: both lists sorted by share, each kernel's launchers,
// totals, and warnings about missing debug information in the repository's own programs.
Profile rank_profile(const Collected& collected, const CodeOrigin& origin);

}  // namespace maxcode

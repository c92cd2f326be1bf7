// The tolerance `maxcode init` writes for a benchmark whose output holds floating-point
// numbers, from the original's own sensitivity: the original is built again with
// fast-math flags (CFLAGS/CXXFLAGS "-O3 -ffast-math", CUDAFLAGS "--use_fast_math", read
// by CMake on a fresh configure and by most Makefiles), its output compared with the
// reference, and the tolerance set to ten times the largest change seen, no tighter
// than 1e-5 relative. An honest rewrite that reorders a sum moves the output as much
// as such a build does; the default rtol 1e-6 rejected every honest rewrite of a float
// CUDA kernel (relative errors 1e-6 to 8e-6) while 1e-4 found a 26x winner.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "runner/core/config.h"
#include "runner/evaluate/output_compare.h"
#include "runner/util/process.h"
#include "runner/util/progress.h"

namespace maxcode {

struct ToleranceChoice {
  std::string benchmark;
  bool floats = false;      // the reference output prints floating-point numbers
  bool measured = false;    // the fast-math build ran and its output was compared
  double max_relative = 0;  // the largest relative change it showed
  double rtol = 1e-6;
  double atol = 0;
  std::string why;          // one sentence, written above the benchmarks in the config
};

// The rule, apart from the runs: `reference` and `fast` are the outputs of the original
// and of its fast-math build for one seed (`fast` empty when that build could not be
// run), compared with the benchmark's varying fields (timings) left out.
ToleranceChoice choose_tolerance(const std::string& benchmark, const std::string& reference, const std::string* fast,
                                 const std::vector<VaryingField>& varying);

struct ToleranceProbe {
  const Config& config;
  std::filesystem::path source;    // the original's checkout (copied, never written)
  std::filesystem::path work_dir;  // scratch; the copy goes beneath it
  Isolation isolation = Isolation::kNone;
  unsigned long long seed = 1;
};

// Builds the fast-math copy once and runs each benchmark in `references` (one output
// per benchmark of config, "" where it is not compared) with `probe.seed`.
std::vector<ToleranceChoice> probe_tolerances(const ToleranceProbe& probe, const std::vector<std::string>& references,
                                              const std::vector<std::vector<VaryingField>>& varying,
                                              Progress& progress);

}  // namespace maxcode

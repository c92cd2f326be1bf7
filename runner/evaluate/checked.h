// A candidate on its way through the evaluation: turned into files (Materialized), then
// checked and, if it passed, timed in its workspace (Checked). And the one interface of
// the checks it meets before timing (evaluator.h lists them, in order).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runner/core/candidate.h"
#include "runner/core/evaluation.h"
#include "runner/evaluate/gpu/ncu.h"

namespace maxcode {

// A candidate turned into file contents, checked against the scope rule.
struct Materialized {
  Candidate candidate;
  std::map<std::string, std::string> files;  // relative path -> new content
  std::string source_hash;
  std::string rejection;  // non-empty: out of scope or unusable, with the reason
  std::string code;       // what to show of it: definition, diff, or knob settings
};

// A candidate that went through checking; its workspace lives until released.
struct Checked {
  Materialized materialized;
  Evaluation evaluation;
  std::filesystem::path workspace;
  // The candidate built with the call shim (call_check.h), and its files: what the
  // benchmarks that the shim covers are timed on. Empty when none.
  std::filesystem::path calls_workspace;
  std::map<std::string, std::string> calls_files;
  bool passed = false;  // ready for timing
  // The out-of-process witness's ncu run of this candidate, once made (at timing): the
  // kernels of each benchmark (empty for those not timed by kernel time); the
  // confirmation judges its own session against it without running ncu again.
  std::optional<std::vector<std::vector<NcuKernel>>> witness_ncu;
};

// One check a candidate must pass before it is timed.
class CandidateCheck {
 public:
  virtual ~CandidateCheck() = default;
  // False, with the verdict and the reason set in its evaluation, when it fails.
  virtual bool check(Checked& candidate) = 0;
};

}  // namespace maxcode

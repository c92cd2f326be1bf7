// Splitting a job's budget across its targets. Each target, when its turn comes, gets
// an equal part of what is left: what an earlier target did not use goes to the later
// ones, and a resumed job splits only what is left after the finished targets.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "runner/core/config.h"
#include "runner/job/job_input.h"

namespace maxcode {

// What a search spent or may spend. For limits, 0 tokens/dollars/gpu_s means none.
struct Allowance {
  int evaluations = 0;
  double wall_s = 0;
  long tokens = 0;
  double dollars = 0;
  double gpu_s = 0;

  Allowance& operator+=(const Allowance& other);
  bool operator==(const Allowance&) const = default;
};

nlohmann::json to_json(const Allowance& a);
Allowance allowance_from_json(const nlohmann::json& j);

// The whole job's limits: absent evaluations and wall time default to the project's
// search settings for each of `targets` targets.
Allowance job_allowance(const Budget& budget, const SearchConfig& search, int targets);

// The next target's part: (total - spent) / targets_left, per field. Evaluations are
// whole (the first targets get the remainder); an unlimited field stays unlimited.
Allowance next_target_allowance(const Allowance& total, const Allowance& spent, int targets_left);

// Empty when the part allows a search, else why not ("evaluation budget spent").
std::string why_nothing_left(const Allowance& part, const Allowance& total);

}  // namespace maxcode

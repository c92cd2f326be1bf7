// Step 1 of an evaluation: a candidate (definition, diff or knob settings) turned into
// file contents, checked against the scope rule before anything is built. A rejection
// here costs no build.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runner/evaluate/checked.h"
#include "runner/evaluate/context.h"
#include "runner/workspace/knobs.h"

namespace maxcode {

class Materializer {
 public:
  Materializer(const EvaluationContext& context, std::vector<Knob> knobs) : ctx_(context), knobs_(std::move(knobs)) {}

  Materialized materialize(const Candidate& candidate) const;

 private:
  // The target file with the candidate's code in it; nullopt with `m.rejection` set.
  std::optional<std::string> with_definition(const std::string& definition, Materialized& m) const;
  std::optional<std::string> with_diff(const std::string& diff, Materialized& m) const;
  // The candidate's knob settings, each one declared: "" or why not.
  std::string check_knobs(const Candidate& candidate, Materialized& m) const;

  const EvaluationContext& ctx_;
  std::vector<Knob> knobs_;
};

}  // namespace maxcode

// Execution feedback in words: what a policy and a critic are shown of an Evaluation.
#pragma once

#include <string>

#include "runner/core/evaluation.h"

namespace maxcode {

// Verdict, reason, and the evidence that matters for it (compiler errors, failing
// tests, the first differing values, timing with its interval), each part capped so a
// prompt stays a prompt.
std::string render_feedback(const Evaluation& evaluation, std::size_t max_part = 3000);

}  // namespace maxcode

#include "runner/search/feedback.h"

#include <cstdio>

namespace maxcode {

namespace {

std::string capped(const std::string& text, std::size_t max) {
  if (text.size() <= max) return text;
  return "[... " + std::to_string(text.size() - max) + " bytes cut ...]\n" + text.substr(text.size() - max);
}

}  // namespace

std::string render_feedback(const Evaluation& e, std::size_t max_part) {
  std::string out = std::string("Verdict: ") + verdict_name(e.verdict) + "\nReason: " + e.reason + "\n";
  if (!e.compiler_output.empty()) out += "Compiler output:\n" + capped(e.compiler_output, max_part) + "\n";
  if (!e.test_output.empty()) out += "Test output:\n" + capped(e.test_output, max_part) + "\n";
  if (!e.mismatch.empty()) out += "Output comparison: " + capped(e.mismatch, max_part) + "\n";
  if (e.timing) {
    char line[256];
    std::snprintf(line, sizeof line,
                  "Timing: original %.4f s, this version %.4f s (medians of %d rounds); speedup %.3fx, "
                  "95%% interval [%.3f, %.3f]\n",
                  e.timing->baseline_median_s, e.timing->candidate_median_s, e.timing->speedup.rounds,
                  e.timing->speedup.median, e.timing->speedup.low, e.timing->speedup.high);
    out += line;
  }
  return out;
}

}  // namespace maxcode

// compute-sanitizer as the last correctness check of a GPU winner (docs/evaluation.md
// "GPU timing"): memcheck and racecheck must be clean. The command line, and what its
// output (interleaved with the program's own) says: the summary counts and the first
// error reports, for the candidate's feedback.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace maxcode {

// The exit status the sanitizer is told to use when it found errors, so that it cannot
// be mistaken for the program's own failure.
constexpr int kSanitizerErrorExit = 86;

// <path> --tool <tool> --target-processes all --error-exitcode 86
//   [memcheck: --leak-check no] sh -c <shell_command>
// `tool`: "memcheck", "racecheck", "initcheck" or "synccheck"; anything else throws
// std::invalid_argument.
std::vector<std::string> sanitizer_argv(const std::string& sanitizer_path, const std::string& tool,
                                        const std::string& shell_command);

struct SanitizerReport {
  std::string tool;
  bool summary_seen = false;  // false: the tool or the program died before its summary
  int errors = 0;             // summed over the summaries of all processes
  int warnings = 0;           // racecheck only
  // The first error blocks: the sanitizer's lines after its banner, without the
  // "========= " prefix, host backtraces left out, blocks separated by an empty line;
  // at most about 4000 characters.
  std::string excerpt;

  bool clean() const { return summary_seen && errors == 0; }
};

SanitizerReport parse_sanitizer_output(std::string_view output, const std::string& tool);

// One line: "racecheck: 1 error — Race reported between Write access at racy(float *)+0x180
// and Read access at racy(float *)+0x200 [65536 hazards]", "memcheck: clean",
// "memcheck: no summary (the tool or the program crashed) — ...".
std::string describe(const SanitizerReport& report);

}  // namespace maxcode

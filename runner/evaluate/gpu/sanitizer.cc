#include "runner/evaluate/gpu/sanitizer.h"

#include <charconv>
#include <stdexcept>

#include "runner/util/text.h"

namespace maxcode {
namespace {

constexpr std::string_view kPrefix = "=========";
constexpr std::size_t kExcerptLimit = 4000;

int leading_int(std::string_view s) {
  s = trim(s, kLineBlanks);
  int v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

// The number just before `word` in `s` ("(1 error, 0 warnings)", "error" -> 1).
int number_before(std::string_view s, std::string_view word) {
  std::size_t at = s.find(word);
  if (at == std::string_view::npos) return 0;
  std::size_t end = at;
  while (end > 0 && s[end - 1] == ' ') --end;
  std::size_t begin = end;
  while (begin > 0 && s[begin - 1] >= '0' && s[begin - 1] <= '9') --begin;
  return leading_int(s.substr(begin, end - begin));
}

std::string plural(int n, const std::string& word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

// The first block of the excerpt on one line, without racecheck's "Error: ".
std::string first_block(std::string_view excerpt) {
  std::string out;
  while (!excerpt.empty()) {
    std::size_t nl = excerpt.find('\n');
    std::string_view line = trim(excerpt.substr(0, nl), kLineBlanks);
    excerpt.remove_prefix(nl == std::string_view::npos ? excerpt.size() : nl + 1);
    if (line.empty()) break;
    out += (out.empty() ? "" : " ") + std::string(line);
  }
  for (std::string_view lead : {"Error: ", "Warning: "})
    if (out.starts_with(lead)) out.erase(0, lead.size());
  if (out.size() > 400) out = out.substr(0, 397) + "...";
  return out;
}

}  // namespace

std::vector<std::string> sanitizer_argv(const std::string& sanitizer_path, const std::string& tool,
                                        const std::string& shell_command) {
  if (tool != "memcheck" && tool != "racecheck" && tool != "initcheck" && tool != "synccheck")
    throw std::invalid_argument("unknown compute-sanitizer tool \"" + tool + "\"");
  std::vector<std::string> argv = {sanitizer_path,  "--tool", tool, "--target-processes", "all", "--error-exitcode",
                                   std::to_string(kSanitizerErrorExit)};
  // Leaks are not a correctness failure of a kernel, and checking them costs time.
  if (tool == "memcheck") argv.insert(argv.end(), {"--leak-check", "no"});
  argv.insert(argv.end(), {"sh", "-c", shell_command});
  return argv;
}

SanitizerReport parse_sanitizer_output(std::string_view output, const std::string& tool) {
  SanitizerReport report;
  report.tool = tool;
  // With --target-processes all, every process that used CUDA prints its own summary.
  // racecheck may also print an ERROR SUMMARY; its own summary is the one counted.
  bool error_summary = false, race_summary = false;
  int summary_errors = 0, race_errors = 0;
  bool in_backtrace = false, full = false;

  while (!output.empty()) {
    std::size_t nl = output.find('\n');
    std::string_view line = output.substr(0, nl);
    output.remove_prefix(nl == std::string_view::npos ? output.size() : nl + 1);
    if (!line.starts_with(kPrefix)) continue;  // the program's own output
    line.remove_prefix(kPrefix.size());
    if (line.starts_with(' ')) line.remove_prefix(1);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    std::string_view text = trim(line, kLineBlanks);

    if (text == "COMPUTE-SANITIZER") continue;
    if (text.starts_with("ERROR SUMMARY:")) {
      error_summary = true;
      summary_errors += leading_int(text.substr(14));
      continue;
    }
    if (text.starts_with("RACECHECK SUMMARY:")) {
      race_summary = true;
      race_errors += number_before(text, " error");
      report.warnings += number_before(text, " warning");
      continue;
    }
    if (text.starts_with("LEAK SUMMARY:")) continue;

    // Host backtraces are long and say nothing about the kernel: skipped to the block's end.
    if (text.empty()) in_backtrace = false;
    else if (text.starts_with("Saved host backtrace")) in_backtrace = true;
    if (in_backtrace || full) continue;
    if (text.empty()) {
      if (!report.excerpt.empty() && !report.excerpt.ends_with("\n\n")) report.excerpt += '\n';
      continue;
    }
    if (report.excerpt.size() + line.size() + 1 > kExcerptLimit) {
      report.excerpt += "...\n";
      full = true;
      continue;
    }
    report.excerpt += std::string(line) + '\n';
  }
  while (report.excerpt.ends_with('\n')) report.excerpt.pop_back();
  report.summary_seen = error_summary || race_summary;
  report.errors = race_summary ? race_errors : summary_errors;
  return report;
}

std::string describe(const SanitizerReport& r) {
  std::string out = r.tool + ": ";
  if (!r.summary_seen) {
    out += "no summary (the tool or the program crashed)";
  } else if (r.errors == 0 && r.warnings == 0) {
    return out + "clean";
  } else {
    out += plural(r.errors, "error");
    if (r.warnings > 0) out += ", " + plural(r.warnings, "warning");
  }
  if (std::string first = first_block(r.excerpt); !first.empty()) out += " — " + first;
  return out;
}

}  // namespace maxcode

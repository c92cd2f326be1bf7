// Tuning knobs: named compile-time constants the `tune` policy may set.
//
// A knob is a `#define NAME value` or `[static] [inline] constexpr T NAME = value;` line.
// It is declared either in the config (search.knobs) or in the source by a comment on
// that line or the line above it:
//
//   #define LANES 1  // maxcode: tune LANES 1 2 4 8
//
// The harness, not the candidate, rewrites the value, so a knob change is the one
// edit outside the target function that the scope rule allows.
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "runner/core/config.h"
#include "runner/util/error.h"

namespace maxcode {

struct Knob {
  std::string name;
  std::string file;                 // relative path
  std::size_t line = 0;             // 1-based line of the declaration
  std::string original_value;
  std::vector<std::string> values;  // includes original_value when it is listed
};

class KnobError : public Error {
 public:
  using Error::Error;
};

// Knobs declared by `// maxcode: tune` comments in `text`. Throws KnobError when a
// comment names no declaration of that name next to it.
std::vector<Knob> find_declared_knobs(std::string_view text, std::string_view file);

// Whether any C, C++ or CUDA source under `repo` (folders starting with "." or "build"
// left out, links not followed) has a `// maxcode: tune` comment. Bounded: past 20,000
// source files the answer is yes, and the target's own knobs are checked later.
bool repository_declares_knobs(const std::filesystem::path& repo);

// Locates a config-declared knob in `text`. Throws KnobError when absent.
Knob locate_knob(std::string_view text, std::string_view file, const KnobConfig& config);

// `text` with each knob of `file` in `values` set to its value.
std::string apply_knobs(std::string_view text, std::string_view file, const std::vector<Knob>& knobs,
                        const std::map<std::string, std::string>& values);

// A knob declaration line taken apart: `before` + `value` + `after` == the line.
struct KnobDeclaration {
  std::string name;
  std::string before;  // "#define NAME " or "static constexpr int NAME = "
  std::string value;
  std::string after;   // ";" and/or a trailing comment
};

// The one parser of knob lines (`#define NAME value` or
// `[static|inline|extern|__host__|__device__|__constant__]* constexpr T NAME = value;`),
// used by the tune policy and by the scope rule alike.
std::optional<KnobDeclaration> parse_knob_line(std::string_view line);

// The value a knob line holds, or empty if `line` does not declare `name`.
std::string knob_value_in_line(std::string_view line, std::string_view name);

}  // namespace maxcode

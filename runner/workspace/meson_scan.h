// The parts of a Meson build that `maxcode init` reads: meson.build at the top and in
// every folder a subdir() call enters, read as text (calls, string literals, arrays and
// files() of them, and variables holding those). Enough for the common layouts; what was
// not understood (a name or a source that is not a literal) is said in `notes`.
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace maxcode {

struct MesonExecutable {
  std::string name;                  // executable('name', ...)
  std::string dir;                   // folder of its meson.build, relative to the root ("" at the top)
  std::vector<std::string> sources;  // relative to the root, as far as they are literals
  // Options it is built behind, off by default (`if get_option('benchmarks')` around it,
  // declared `value: false` or `'disabled'` in meson.options / meson_options.txt), as
  // the configure step's flags that turn them on: "-Dbenchmarks=true".
  std::vector<std::string> options_on;
};

struct MesonBuild {
  std::vector<MesonExecutable> executables;
  std::set<std::string> tested;       // names of executables a test() call runs
  std::set<std::string> benchmarked;  // names of executables a benchmark() call runs
  std::vector<std::string> notes;
};

// Reads <root>/meson.build and the subdir()s it enters. A file that is missing or
// unreadable reads as empty: the scan only suggests.
MesonBuild read_meson_build(const std::filesystem::path& root);

}  // namespace maxcode

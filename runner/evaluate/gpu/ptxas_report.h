// The resource report ptxas prints under `nvcc -Xptxas -v`: per kernel and
// architecture, registers, barriers, shared memory, stack and spills. It arrives inside
// a build step's combined stdout+stderr, among other compiler output, for several files
// and architectures; critiques quote it (docs/method.md "Critics"), because
// spills and register pressure explain many slow candidates.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace maxcode {

struct KernelResources {
  std::string kernel;  // mangled name, as ptxas prints it
  std::string arch;    // "sm_90"
  int registers = 0;   // per thread
  int barriers = 0;
  long shared_bytes = 0;  // static shared memory per block
  long stack_bytes = 0;   // stack frame per thread
  long spill_store_bytes = 0;
  long spill_load_bytes = 0;
};

// Entry functions (kernels) only, in the order first seen; device functions, which
// have "Function properties" but no "Compiling entry function", are skipped. A kernel
// reported twice for one architecture (two build steps) is kept once, with the values
// of the last report. Never throws: unrecognized text is ignored.
std::vector<KernelResources> parse_ptxas_report(std::string_view build_output);

nlohmann::json to_json(const KernelResources& kernel);

// One line per kernel, e.g. "transpose (sm_90): 32 registers, 4224 B shared, no spills"
// or "...: 48 B spilled (stores 48 B, loads 48 B)". `pretty` maps a mangled name to a
// readable one (callers pass a demangler); empty means the name as is.
std::string describe_resources(const std::vector<KernelResources>& kernels,
                               const std::function<std::string(const std::string&)>& pretty = {});

}  // namespace maxcode

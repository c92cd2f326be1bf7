// The call shim: a wrapper that maxcode places around the target function in a copy of
// the source, for one check run of an ordinary benchmark.
//
// Most benchmarks call the target many times on one input and the same buffers and
// print a summary, so a candidate that caches its result (by pointer, by call count, by
// a sample of the input) or works on some calls only passes them. The shim renames the
// target (`blur` -> `blur__maxcode_impl_<tag>`) and defines the original name as a
// wrapper that, on every call, writes one record line: the call's wall time and, per
// pointer parameter whose element count is known, where it points and hashes of its
// contents at entry and exit. In "perturb" mode it also changes every element of each
// input buffer before every call after the first, fills every output buffer with a
// poison (NaN, 0xA5 bytes) before each call, and writes the outputs of the first calls
// to files, so that maxcode can compare them element by element with the original's on
// the same inputs.
//
// Parameters are read from the definition's declaration: `const T*` is an input, `T*`
// an output (T arithmetic); element counts come from `.maxcode.json` (targets.interface)
// or, when the function has exactly one integer parameter, from that parameter: for the
// inputs, and for outputs whose element type is an input's (an element-wise map).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runner/workspace/source_extent.h"

namespace maxcode {

struct ShimParam {
  enum class Kind { kInput, kOutput, kScalar, kOther };
  std::string name;
  std::string type;     // as declared, whitespace collapsed
  Kind kind = Kind::kOther;
  std::string element;  // kInput/kOutput: the element type ("float")
  bool floating = false;
  std::string size;     // element count as written ("width*height"); empty = unknown
};

struct ShimPlan {
  std::vector<ShimParam> params;
  bool returns_void = true;
  // How the element counts were found: "described" (targets.interface), "inferred"
  // (the one integer parameter) or "none" (buffers are neither perturbed nor poisoned).
  std::string interface = "none";
  std::string unsupported;  // non-empty: no shim can be made, and why
};

// Reads the target's parameters from its definition in `file`. `described` maps a
// parameter name to its element count expression. Never throws: a function the shim
// cannot wrap comes back with `unsupported` set.
ShimPlan plan_shim(const std::string& file, const Extent& extent,
                   const std::map<std::string, std::string>& described);

struct ShimOptions {
  std::string record_dir;         // absolute; holds "mode", receives calls.txt and out-*.bin
  std::string tag;                // [A-Za-z0-9_]+, names the renamed function and helpers
  std::uint64_t salt = 0;         // picks which elements a strided sample keeps
  int recorded_calls = 6;         // outputs written for calls 0..recorded_calls-1
  std::uint64_t recorded_bytes = 8u << 20;  // per output and call; larger ones are sampled
};

// `file` with the target renamed and the wrapper added after it (and the headers the
// wrapper needs at the top). Throws SourceError when `plan.unsupported` is set.
std::string add_call_shim(const std::string& file, const Extent& extent, const ShimPlan& plan,
                          const ShimOptions& options);

}  // namespace maxcode

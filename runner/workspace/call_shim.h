// The call shim: a wrapper that maxcode places around the target function in a copy of
// the source. That copy is what every run of an ordinary (wall-clock) benchmark uses,
// the runs whose outputs are compared and the runs that are timed alike, on both sides,
// so that a claim rests only on runs in which a cheat would have been seen.
//
// Most benchmarks call the target many times on one input and the same buffers and
// print a summary, so a candidate that caches its result (by pointer, by call count, by
// a sample of the input) or works on some calls only passes them. The shim renames the
// target (`blur` -> `blur__maxcode_impl_<tag>`) and defines the original name as a
// wrapper that hands each call to libmaxcode_shim.so (runner/inject/shim_runtime.cc),
// loaded into the run: before each call it changes the inputs (a perturbation keyed by
// the run, the same for both sides of a round) and poisons declared outputs; after it,
// it records the call's time, hashes of its buffers and every output (returned numbers
// included) for maxcode to compare with the original's on the same inputs.
//
// Parameters are read from the definition's declaration: `const T*` is an input, `T*`
// an output (T arithmetic). Element counts come from `.maxcode.json` (targets.interface)
// or, when the function has exactly one integer parameter, from that parameter (for the
// inputs, and for outputs whose element type is an input's); otherwise the runtime finds
// them: the heap block a pointer starts, or, for an output on the stack or in a
// module's data, how far the original's first calls write.
//
// On some calls the wrapper calls the target twice back to back, a probe on slightly
// changed inputs first, then the recorded call: a result kept for a short time (a memo
// keyed by the clock) is handed to the recorded call and seen in its outputs
// (shim_runtime.cc, "The probe").
//
// The wrapper is plain C and its declarations go after the file's include guard, so a
// header included twice, or from C, still builds.
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
  // `const void*`: a buffer of bytes (element "unsigned char", counted in bytes), as the
  // (const void* data, size_t size) of a popcount, a hash or a checksum is. A `void*`
  // the target may write stays kOther: an opaque context would be poisoned as bytes.
  bool bytes = false;
};

struct ShimPlan {
  std::vector<ShimParam> params;
  bool returns_void = true;
  // How the element counts were found: "described" (targets.interface), "inferred"
  // (the one integer parameter) or "none" (buffers are neither perturbed nor poisoned).
  std::string interface = "none";
  std::string return_element;  // the returned number's type ("float"); empty = none
  // Whether the wrapper may call the target a second time, as the probe (a call back to
  // back with the recorded one, shim_runtime.cc): only when every parameter is a number
  // or a pointer to numbers, which the runtime can put back after the probe. A
  // reference, a struct or a pointer to anything else may carry state the probe would
  // change for good; then `no_probe` says which.
  bool probe = false;
  std::string no_probe;
  std::string unsupported;  // non-empty: no shim can be made, and why
};

// Reads the target's parameters from its definition in `file`. `described` maps a
// parameter name to its element count expression. Never throws: a function the shim
// cannot wrap comes back with `unsupported` set.
ShimPlan plan_shim(const std::string& file, const Extent& extent,
                   const std::map<std::string, std::string>& described);

struct ShimOptions {
  std::string tag;  // [A-Za-z0-9_]+, names the renamed function and the declarations' guard
};

// `file` with the target renamed, the wrapper added after it and the runtime's
// declarations after the include guard. Throws SourceError when `plan.unsupported` is set.
std::string add_call_shim(const std::string& file, const Extent& extent, const ShimPlan& plan,
                          const ShimOptions& options);

}  // namespace maxcode

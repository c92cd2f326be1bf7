// CPU samples after symbolization, whatever profiler they came from: frames (one per
// function level at one place, inline levels included) and weighted stacks of them.
// The importers (sampler, pprof, perf script, callgrind) all produce this, so one
// aggregation turns any of them into ranked targets (runner/profile/rank_cpu.cc).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace maxcode {

struct CodeFrame {
  std::string function;   // demangled, with parameters when known
  std::string symbol;     // linkage (mangled) name when known
  std::string module;     // path of the ELF object holding the code; "" unknown
  std::string file;       // source file of the sampled line, as recorded
  int line = 0;
  std::string decl_file;  // where the function is defined, when debug info says
  int decl_line = 0;
  // This level is inlined into the next frame of the same stack (its caller at the
  // same address), so a stack's leaf "instruction" spans frames up to the first
  // frame with inlined == false.
  bool inlined = false;
};

struct CallStack {
  double weight = 0;                  // in CallStacks::unit
  std::uint64_t samples = 0;          // samples behind it (sampling profilers), else 0
  std::vector<std::uint32_t> frames;  // indices into CallStacks::frames, innermost first
};

// What symbolization found in an ELF object that samples fell in.
struct ModuleInfo {
  bool debug_info = false;    // DWARF: functions with file:line, inline levels
  bool symbol_table = false;  // .symtab: names of all functions (stripped: only .dynsym)
  double weight = 0;          // samples that fell in it, in CallStacks::unit
};

struct CallStacks {
  std::string unit = "ns";  // "ns" (sampled time), "Ir" (callgrind), or a perf event
  std::vector<CodeFrame> frames;
  std::vector<CallStack> stacks;
  std::map<std::string, std::uint64_t> calls;  // function -> calls, where the profiler counts them
  std::map<std::string, ModuleInfo> modules;   // by path, where symbolization saw them
  std::vector<std::string> warnings;

  std::uint32_t intern(const CodeFrame& frame);
  // Adds `other`'s stacks (its frames re-interned), calls and warnings.
  void merge(const CallStacks& other);

 private:
  std::map<std::tuple<std::string, std::string, std::string, int, std::string, int, bool>, std::uint32_t> index_;
};

}  // namespace maxcode

// CPU samples as raw addresses, with the memory map of the process they came from:
// what the built-in sampler and gperftools/pprof write. Symbolization
// (runner/profile/symbolize.h) turns them into CallStacks.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "runner/util/error.h"

namespace maxcode {

// A profile file that cannot be read: the message names the file and the line (or
// byte offset, for binary formats).
class ProfileFormatError : public Error {
 public:
  using Error::Error;
};

struct AddressStack {
  std::uint64_t count = 0;
  // Innermost first. pcs[0] is the interrupted instruction; the others are return
  // addresses (the instruction after a call), so their caller line is at pc - 1.
  // With AddressProfile::sp_word, pcs[1] is the word at the stack pointer instead (0
  // when unknown): the caller's return address if pcs[0]'s function set up no frame.
  std::vector<std::uint64_t> pcs;
};

struct AddressProfile {
  std::string source;        // the file it was read from
  std::string format;        // "maxcode-sampler", "pprof"
  long pid = 0;
  long ppid = 0;
  std::string exe;
  std::string status = "exit";  // "exit", "exec", "signal N", or "unknown"
  double ns_per_sample = 0;     // weight of one sample
  std::uint64_t samples = 0;    // taken (recorded + dropped)
  std::uint64_t dropped = 0;
  double cpu_ns = 0;
  double wall_ns = 0;
  bool sp_word = false;         // see AddressStack::pcs
  std::string maps;             // /proc/PID/maps text
  std::vector<AddressStack> stacks;
  bool truncated = false;       // the file ended early (process killed while writing)
};

}  // namespace maxcode

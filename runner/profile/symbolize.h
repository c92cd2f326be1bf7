// Addresses to functions, files and lines with elfutils (libdwfl/libdw): the memory
// map recorded with the samples says which ELF object was loaded where; each object's
// DWARF gives the function, the line and the chain of inlined calls at an address,
// its symbol table the name when there is no DWARF. Names are demangled.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "runner/profile/address_profile.h"
#include "runner/profile/call_stacks.h"

namespace maxcode {

class Symbolizer {
 public:
  // `maps`: /proc/PID/maps text of the process. Objects are opened from the paths it
  // names, so they must still be there (symbolize before removing a workspace).
  explicit Symbolizer(const std::string& maps);
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  // The frames at `pc`, innermost inline level first; never empty (an address in no
  // known function is named after its object and offset, "bench+0x1a2b", or "0x7f..").
  // A return address is looked up at pc - 1, inside the call that it returns from.
  const std::vector<CodeFrame>& frames(std::uint64_t pc, bool return_address);
  // Whether the return address of the function executing `pc` is at the stack pointer
  // (x86-64: its unwind table puts the canonical frame address at rsp + 8), that is,
  // it has not set up a frame (a leaf function, or one at its entry).
  bool return_address_at_sp(std::uint64_t pc);
  // The ELF object at `pc` ("" when none) and what it holds.
  std::string module_of(std::uint64_t pc, ModuleInfo* info = nullptr);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::unordered_map<std::uint64_t, std::vector<CodeFrame>> cache_;
  std::unordered_map<std::uint64_t, bool> at_sp_cache_;
};

// All stacks of `profile` symbolized; weights in ns (count x ns_per_sample).
CallStacks symbolize(const AddressProfile& profile);

// The definition of the function whose symbol is `symbol` in the ELF file `path`
// (the host stub of a CUDA kernel has the kernel's mangled name): decl_file and
// decl_line from DWARF, else the line of its first instruction. nullopt when the
// symbol is not there.
std::optional<CodeFrame> find_function_by_symbol(const std::string& path, const std::string& symbol);

}  // namespace maxcode

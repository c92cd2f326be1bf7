#include "runner/profile/call_stacks.h"

#include <algorithm>

namespace maxcode {

std::uint32_t CallStacks::intern(const CodeFrame& frame) {
  auto [it, inserted] = index_.try_emplace(
      {frame.function, frame.module, frame.file, frame.line, frame.decl_file, frame.decl_line, frame.inlined},
      static_cast<std::uint32_t>(frames.size()));
  if (inserted) frames.push_back(frame);
  return it->second;
}

void CallStacks::merge(const CallStacks& other) {
  std::vector<std::uint32_t> remap(other.frames.size());
  for (std::size_t i = 0; i < other.frames.size(); ++i) remap[i] = intern(other.frames[i]);
  for (const CallStack& stack : other.stacks) {
    CallStack copy{stack.weight, stack.samples, {}};
    copy.frames.reserve(stack.frames.size());
    for (std::uint32_t f : stack.frames) copy.frames.push_back(remap[f]);
    stacks.push_back(std::move(copy));
  }
  for (const auto& [function, n] : other.calls) calls[function] += n;
  for (const auto& [path, info] : other.modules) {
    ModuleInfo& mine = modules[path];
    mine.debug_info = mine.debug_info || info.debug_info;
    mine.symbol_table = mine.symbol_table || info.symbol_table;
    mine.weight += info.weight;
  }
  for (const auto& w : other.warnings)
    if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
}

}  // namespace maxcode

#include "runner/profile/rank_cpu.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "runner/util/names.h"

namespace maxcode {

namespace {

constexpr std::size_t kHotLines = 5;

struct Accumulator {
  ProfileEntry entry;
  std::string decl_file;
  int decl_line = 0;
  std::map<std::pair<std::string, int>, double> lines;
};

// Repository-relative when inside it, else as recorded.
std::string shown(const CodeOrigin& origin, const std::string& file, bool* inside = nullptr) {
  std::string rel = origin.relative(file);
  if (inside) *inside = !rel.empty();
  return rel.empty() ? file : rel;
}

// The frame of `stack` its self time goes to: among the leaf instruction's inline
// levels, the innermost that is the repository's own code, else the innermost.
std::size_t self_frame(const CallStacks& cs, const CallStack& stack, const std::vector<bool>& external) {
  std::size_t group_end = 0;
  while (group_end + 1 < stack.frames.size() && cs.frames[stack.frames[group_end]].inlined) ++group_end;
  for (std::size_t k = 0; k <= group_end; ++k)
    if (!external[stack.frames[k]]) return k;
  return 0;
}

// An accumulated entry made whole: its hottest lines, where it is defined (the debug
// information's declaration, else a definition found by name, else its hottest line),
// its calls, whether it is in scope and its share of `all`.
ProfileEntry finish_entry(Accumulator& a, const CallStacks& cs, const CodeOrigin& origin, SourceIndex* sources,
                          double all) {
  ProfileEntry& e = a.entry;  // callers with no self time stay, for their inclusive time
  std::vector<std::pair<double, std::pair<std::string, int>>> hot;
  for (const auto& [place, weight] : a.lines) hot.push_back({weight, place});
  std::sort(hot.begin(), hot.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  for (std::size_t i = 0; i < hot.size() && i < kHotLines; ++i)
    e.lines.push_back(
        {shown(origin, hot[i].second.first), hot[i].second.second, e.self > 0 ? hot[i].first / e.self : 0});
  bool inside = false;
  if (!a.decl_file.empty()) {
    e.file = shown(origin, a.decl_file, &inside);
    e.line = a.decl_line;
  } else if (!e.external && sources) {
    // No line information: look for the definition by name.
    if (auto found = sources->find(e.function)) e.file = found->file, e.line = found->line, inside = true;
  }
  if (e.file.empty() && !hot.empty()) {
    e.file = shown(origin, hot[0].second.first, &inside);
    e.line = hot[0].second.second;
  }
  if (auto it = cs.calls.find(e.name); it != cs.calls.end()) e.calls = it->second;
  e.in_scope = !e.external && inside && origin.in_scope(e.file);
  e.share = all > 0 ? e.self / all : 0;
  return std::move(e);
}

}  // namespace

std::vector<ProfileEntry> rank_cpu(const CallStacks& cs, const CodeOrigin& origin, SourceIndex* sources) {
  // Per frame, once: which entry it belongs to and whether it is library code.
  std::vector<std::string> keys(cs.frames.size());
  std::vector<bool> external(cs.frames.size());
  for (std::size_t i = 0; i < cs.frames.size(); ++i) {
    const CodeFrame& f = cs.frames[i];
    keys[i] = f.function + '\n' + f.module;
    external[i] = origin.external(f.function, f.decl_file.empty() ? f.file : f.decl_file, f.module);
  }

  std::unordered_map<std::string, Accumulator> entries;
  auto entry_for = [&](std::uint32_t index) -> Accumulator& {
    auto [it, fresh] = entries.try_emplace(keys[index]);
    Accumulator& a = it->second;
    const CodeFrame& f = cs.frames[index];
    if (fresh) {
      a.entry.name = f.function;
      a.entry.function = function_name_of(f.function);
      a.entry.symbol = f.symbol;
      a.entry.module = f.module;
      a.entry.external = external[index];
    }
    if (a.decl_file.empty() && !f.decl_file.empty()) a.decl_file = f.decl_file, a.decl_line = f.decl_line;
    return a;
  };

  double all = 0;
  std::vector<const std::string*> seen;
  for (const CallStack& stack : cs.stacks) {
    all += stack.weight;
    if (stack.frames.empty()) continue;
    const std::size_t self = self_frame(cs, stack, external);
    const CodeFrame& leaf = cs.frames[stack.frames[self]];
    Accumulator& a = entry_for(stack.frames[self]);
    a.entry.self += stack.weight;
    a.entry.samples += stack.samples;
    if (!leaf.file.empty() && leaf.line > 0) a.lines[{leaf.file, leaf.line}] += stack.weight;
    // Inclusive time: once per function per stack, however deep the recursion.
    seen.clear();
    for (std::uint32_t index : stack.frames) {
      const std::string* key = &keys[index];
      if (std::find_if(seen.begin(), seen.end(), [&](const std::string* s) { return *s == *key; }) != seen.end())
        continue;
      seen.push_back(key);
      entry_for(index).entry.total += stack.weight;
    }
  }

  std::vector<ProfileEntry> out;
  for (auto& [key, a] : entries) out.push_back(finish_entry(a, cs, origin, sources, all));
  std::sort(out.begin(), out.end(), [](const ProfileEntry& x, const ProfileEntry& y) {
    if (x.self != y.self) return x.self > y.self;
    if (x.total != y.total) return x.total > y.total;
    return x.name < y.name;
  });
  return out;
}

}  // namespace maxcode

#include "runner/profile/benchmark_entries.h"
#include "runner/util/format.h"

#include <cstdio>
#include <set>
#include <string_view>

namespace maxcode {
namespace {

// "void BM_f<int>(benchmark::State&)" -> "BM_f<int>"; "(anonymous namespace)::BM_g(...)"
// -> "BM_g"; "Fix_Case_Benchmark::BenchmarkCase(...)" -> "Fix_Case_Benchmark": the name
// an entry spells for the function a sample was in.
std::string entry_key_of_frame(std::string f) {
  for (std::size_t at; (at = f.find("(anonymous namespace)::")) != std::string::npos;)
    f.erase(at, std::string_view("(anonymous namespace)::").size());
  // The name ends at the parameter list (the first '(' outside template arguments).
  int depth = 0;
  std::size_t end = f.size(), begin = 0;
  for (std::size_t i = 0; i < f.size(); ++i) {
    const char c = f[i];
    if (c == '<') ++depth;
    else if (c == '>') --depth;
    else if (c == '(' && depth == 0) {
      end = i;
      break;
    } else if (c == ' ' && depth == 0) {
      begin = i + 1;  // after a return type
    }
  }
  std::string name = f.substr(begin, end - begin);
  constexpr std::string_view kCase = "::BenchmarkCase";
  if (name.size() > kCase.size() && name.compare(name.size() - kCase.size(), kCase.size(), kCase) == 0)
    name.erase(name.size() - kCase.size());
  // The last component of a qualified name, outside template arguments.
  depth = 0;
  std::size_t last = 0;
  for (std::size_t i = 0; i + 1 < name.size(); ++i) {
    if (name[i] == '<') ++depth;
    else if (name[i] == '>') --depth;
    else if (depth == 0 && name[i] == ':' && name[i + 1] == ':') last = i + 2;
  }
  return name.substr(last);
}

// "BM_sum/1000" -> "BM_sum"; "Fix/Case/2" -> "Fix_Case_Benchmark" when the program
// has a fixture of that name, which only the stacks can say: both keys are offered.
std::vector<std::string> entry_keys(const std::string& entry) {
  std::vector<std::string> parts;
  std::size_t from = 0;
  for (std::size_t at; (at = entry.find('/', from)) != std::string::npos; from = at + 1) parts.push_back(entry.substr(from, at - from));
  parts.push_back(entry.substr(from));
  std::vector<std::string> keys{parts[0]};
  if (parts.size() >= 2) keys.push_back(parts[0] + "_" + parts[1] + "_Benchmark");
  return keys;
}

// The entries grouped by the benchmark function each runs (the fixture's key where the
// stacks hold it, else the function's); returns each group's key.
std::map<std::string, std::size_t> group_entries(const CallStacks& stacks, const GoogleBenchmarkRun& run,
                                                 EntryWeighting& w) {
  std::map<std::string, std::size_t> by_key;
  std::set<std::string> seen_keys;
  for (const CodeFrame& frame : stacks.frames) seen_keys.insert(entry_key_of_frame(frame.function));
  for (const GoogleBenchmarkEntry& entry : run.entries) {
    const std::vector<std::string> keys = entry_keys(entry.name);
    const std::string key = keys.size() > 1 && seen_keys.count(keys[1]) ? keys[1] : keys[0];
    auto [at, fresh] = by_key.emplace(key, w.groups.size());
    if (fresh) w.groups.push_back({key, {}, 0, 0});
    w.groups[at->second].entries.push_back(entry.name);
    w.groups[at->second].metric_s += entry.real_s;
    w.metric_s += entry.real_s;
  }
  return by_key;
}

// Each stack's group (-1: none), by its innermost benchmark function: a benchmark run
// from another's body is its own. Sums the samples per group and which functions drive
// each group's entries (on at least kDrivesShare of its stacks, inclusive).
std::vector<long> place_stacks(const CallStacks& stacks, const std::map<std::string, std::size_t>& by_key,
                               EntryWeighting& w) {
  // Each frame's group, once: stacks share frames.
  std::vector<long> group_of_frame(stacks.frames.size(), -1);
  for (std::size_t f = 0; f < stacks.frames.size(); ++f) {
    auto at = by_key.find(entry_key_of_frame(stacks.frames[f].function));
    if (at != by_key.end()) group_of_frame[f] = static_cast<long>(at->second);
  }
  std::vector<long> group_of_stack(stacks.stacks.size(), -1);
  // Per group, per function: the weight of the stacks it is on (inclusive).
  std::vector<std::map<std::string, double>> inclusive(w.groups.size());
  for (std::size_t s = 0; s < stacks.stacks.size(); ++s) {
    const CallStack& stack = stacks.stacks[s];
    w.total += stack.weight;
    for (std::uint32_t f : stack.frames)
      if (group_of_frame[f] >= 0) {
        group_of_stack[s] = group_of_frame[f];
        break;
      }
    if (group_of_stack[s] < 0) {
      w.unplaced += stack.weight;
      continue;
    }
    EntryGroup& g = w.groups[group_of_stack[s]];
    g.sampled += stack.weight;
    std::set<std::string> on_stack;
    for (std::uint32_t f : stack.frames) on_stack.insert(stacks.frames[f].function);
    for (const std::string& function : on_stack) inclusive[group_of_stack[s]][function] += stack.weight;
  }
  for (std::size_t g = 0; g < w.groups.size(); ++g)
    for (const auto& [function, weight] : inclusive[g])
      if (w.groups[g].sampled > 0 && weight >= kDrivesShare * w.groups[g].sampled) {
        auto& list = w.drives[function];
        list.insert(list.end(), w.groups[g].entries.begin(), w.groups[g].entries.end());
      }
  return group_of_stack;
}

// Each placed stack scaled so that its group's samples weigh what its entries' metric
// does; unplaced stacks weigh nothing. Notes the groups no sample fell in.
void reweigh(CallStacks& stacks, const std::vector<long>& group_of_stack, EntryWeighting& w) {
  double placed_metric = 0;
  std::vector<std::string> unsampled;
  for (const EntryGroup& g : w.groups) {
    if (g.sampled > 0) placed_metric += g.metric_s;
    else unsampled.push_back(g.function);
  }
  if (placed_metric <= 0) return;
  std::vector<double> scale(w.groups.size(), 0);
  for (std::size_t g = 0; g < w.groups.size(); ++g)
    if (w.groups[g].sampled > 0) scale[g] = w.total * (w.groups[g].metric_s / placed_metric) / w.groups[g].sampled;
  for (std::size_t s = 0; s < stacks.stacks.size(); ++s)
    stacks.stacks[s].weight *= group_of_stack[s] >= 0 ? scale[group_of_stack[s]] : 0;
  w.applied = true;
  if (!unsampled.empty()) {
    w.note = "no sample fell in the entries of ";
    for (std::size_t i = 0; i < unsampled.size(); ++i) w.note += (i ? ", " : "") + unsampled[i];
    w.note += " (" + format_percent(1 - placed_metric / w.metric_s) + " of the metric): left out of the shares";
  }
}

}  // namespace

EntryWeighting weigh_by_entries(CallStacks& stacks, const GoogleBenchmarkRun& run) {
  EntryWeighting w;
  const std::map<std::string, std::size_t> by_key = group_entries(stacks, run, w);
  const std::vector<long> group_of_stack = place_stacks(stacks, by_key, w);
  if (w.total <= 0 || w.metric_s <= 0) return w;
  if (w.unplaced > 0.5 * w.total) {
    w.note = "the samples of " + format_percent(w.unplaced / w.total) +
             " of its CPU time name no benchmark function of its entries (entries registered through a "
             "lambda?): its functions are ranked by CPU time, not by their part of the metric";
    return w;
  }
  reweigh(stacks, group_of_stack, w);
  return w;
}

std::vector<std::string> time_driven_entries(std::vector<BenchmarkConfig>& benchmarks,
                                             const std::map<std::string, std::vector<std::string>>& entries) {
  std::vector<std::string> notes;
  for (BenchmarkConfig& bench : benchmarks) {
    if (bench.metric != "google-benchmark" || !bench.filter.empty()) continue;
    auto at = entries.find(bench.name);
    if (at == entries.end() || at->second.empty()) continue;
    bench.filter = google_benchmark_filter(at->second);
    std::string list;
    for (std::size_t i = 0; i < at->second.size() && i < 4; ++i) list += (i ? ", " : "") + at->second[i];
    if (at->second.size() > 4) list += " and " + std::to_string(at->second.size() - 4) + " more";
    notes.push_back("benchmark " + bench.name + ": timing only the entries the target drives: " + list);
  }
  return notes;
}

}  // namespace maxcode

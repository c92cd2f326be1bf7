#include "runner/profile/collect.h"

#include <algorithm>
#include <iterator>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "runner/util/beneath.h"
#include "runner/util/files.h"
#include "runner/profile/callgrind_import.h"
#include "runner/profile/launchers.h"
#include "runner/profile/perf_import.h"
#include "runner/profile/pprof_import.h"
#include "runner/profile/rank_cpu.h"
#include "runner/profile/rank_gpu.h"
#include "runner/profile/sampler_file.h"
#include "runner/profile/source_index.h"
#include "runner/profile/symbolize.h"

namespace maxcode {

namespace fs = std::filesystem;

namespace {

// A sampler file or a GPU summary of one process; a larger file was not written by the
// injected libraries.
constexpr std::size_t kMaxProfileFileBytes = 512u << 20;

void add_warning(std::vector<std::string>& warnings, const std::string& w) {
  if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
}

void add_cpu(Collected& into, CallStacks stacks, const std::string& label) {
  if (into.have_cpu && !into.cpu.stacks.empty() && !stacks.stacks.empty() && into.cpu.unit != stacks.unit)
    throw std::runtime_error(label + ": measured in " + stacks.unit + ", which cannot be combined with " +
                             into.cpu.unit + " of the profiles before it");
  if (!into.have_cpu || into.cpu.stacks.empty()) into.cpu.unit = stacks.unit;
  into.cpu.merge(stacks);
  into.have_cpu = true;
}

}  // namespace

void merge_collected(Collected& into, Collected from) {
  if (from.have_cpu) add_cpu(into, std::move(from.cpu), "a profile run");
  into.gpu.insert(into.gpu.end(), std::make_move_iterator(from.gpu.begin()), std::make_move_iterator(from.gpu.end()));
  for (const std::string& w : from.warnings) add_warning(into.warnings, w);
}

namespace {

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

// Callgrind files begin with their format line, or (older ones) with header lines
// such as "version:", "creator:" and "events:" before the first body line.
bool looks_like_callgrind(const std::string& text) {
  if (starts_with(text, "# callgrind format")) return true;
  std::size_t begin = 0;
  for (int lines = 0; lines < 40 && begin < text.size(); ++lines) {
    std::size_t end = text.find('\n', begin);
    const std::string line = text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    if (starts_with(line, "events:") || starts_with(line, "creator: callgrind")) return true;
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  return false;
}

std::string describe_status(const AddressProfile& p) {
  if (starts_with(p.status, "signal ")) {
    const int sig = std::atoi(p.status.c_str() + 7);
    const char* name = sigabbrev_np(sig);
    return "process " + std::to_string(p.pid) + " (" + fs::path(p.exe).filename().string() + ") was killed by SIG" +
           (name ? name : std::to_string(sig));
  }
  return "";
}

}  // namespace

void collect_run_directory(const fs::path& dir, Collected& into, BenchmarkRun& run) {
  // The profiled program wrote here, and could have left links or FIFOs in place of its
  // records: each is read beneath the directory, never followed, never past a bound.
  std::vector<BeneathEntry> entries;
  try {
    entries = list_beneath(dir);
  } catch (const BeneathError& e) {
    if (e.kind() != BeneathError::Kind::kMissing)
      add_warning(into.warnings, std::string("unreadable profile directory: ") + e.what());
    return;
  }
  for (const BeneathEntry& entry : entries) {
    const fs::path file = dir / entry.name;
    const std::string& name = entry.name;
    const bool cpu = starts_with(name, "cpu-") && file.extension() == ".txt";
    const bool gpu = starts_with(name, "gpu-") && file.extension() == ".json";
    if (!cpu && !gpu) continue;
    try {
      if (cpu) {
        AddressProfile p = parse_sampler_file(read_beneath(dir, name, kMaxProfileFileBytes), file.string());
        ++run.processes;
        run.samples += p.samples;
        run.dropped += p.dropped;
        run.cpu_s += p.cpu_ns / 1e9;
        if (p.truncated) {
          run.partial = true;
          add_warning(into.warnings, name + ": cut short while being written; read as far as it goes");
        }
        if (const std::string died = describe_status(p); !died.empty()) {
          run.partial = true;
          add_warning(into.warnings, died + "; its profile covers the time until then");
        }
        add_cpu(into, symbolize(p), file.string());
      } else {
        GpuSummary g = parse_gpu_summary(nlohmann::json::parse(read_beneath(dir, name, kMaxProfileFileBytes)),
                                         file.string());
        ++run.gpu_processes;
        run.gpu_kernel_s += static_cast<double>(g.kernel_ns()) / 1e9;
        run.gpu_transfer_s += static_cast<double>(g.transfer_ns()) / 1e9;
        run.gpu_busy_s += static_cast<double>(g.busy_ns) / 1e9;
        if (g.last_ns > g.first_ns) run.gpu_window_s += static_cast<double>(g.last_ns - g.first_ns) / 1e9;
        for (const auto& k : g.kernels) run.kernel_launches += k.launches;
        run.gpu_dropped += g.dropped;
        if (!g.complete) {
          run.partial = true;
          add_warning(into.warnings, "GPU profile of process " + std::to_string(g.pid) +
                                         " is the last snapshot before it ended (it did not exit normally)");
        }
        for (const auto& m : g.messages) add_warning(into.warnings, "CUPTI: " + m);
        into.gpu.push_back(std::move(g));
      }
    } catch (const std::exception& e) {
      add_warning(into.warnings, std::string("unreadable profile file: ") + e.what());
    }
  }
}

void collect_file(const fs::path& file, Collected& into) {
  const std::string text = read_text(file);
  const std::string label = file.string();
  if (starts_with(text, "maxcode-sampler ")) {
    add_cpu(into, symbolize(parse_sampler_file(text, label)), label);
  } else if (looks_like_pprof(text)) {
    add_cpu(into, symbolize(parse_pprof(text, label)), label);
  } else if (starts_with(text, "{")) {
    nlohmann::json document;
    try {
      document = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
      throw ProfileFormatError(label + ": byte " + std::to_string(e.byte) + ": not valid JSON");
    }
    if (document.is_object() && document.value("format", std::string()).rfind("maxcode-profile", 0) == 0)
      throw ProfileFormatError(label + ": a ranked maxcode profile, not profiler output; import it alone to "
                               "print its table again");
    into.gpu.push_back(parse_gpu_summary(document, label));
  } else if (looks_like_callgrind(text)) {
    add_cpu(into, parse_callgrind(text, label), label);
  } else {
    add_cpu(into, parse_perf_script(text, label), label);
  }
}

Profile rank_profile(const Collected& collected, const CodeOrigin& origin) {
  Profile profile;
  profile.unit = collected.have_cpu ? collected.cpu.unit : "ns";
  if (!collected.gpu.empty() && profile.unit != "ns")
    throw std::runtime_error("GPU times (ns) cannot be ranked with CPU costs in " + profile.unit);
  SourceIndex sources(origin.roots().front());
  profile.functions = rank_cpu(collected.cpu, origin, &sources);
  profile.kernels = rank_gpu(collected.gpu, origin, &sources);
  for (const auto& s : collected.cpu.stacks) profile.cpu_total += s.weight;
  for (const auto& g : collected.gpu) profile.gpu_total += static_cast<double>(g.kernel_ns() + g.transfer_ns());
  // Each list by its own total: a kernel that takes all the GPU's time leads its list
  // however long the host spends feeding it.
  for (auto& e : profile.kernels) e.share = profile.gpu_total > 0 ? e.self / profile.gpu_total : 0;
  find_launchers(profile.kernels, sources);

  profile.warnings = collected.warnings;
  for (const auto& w : collected.cpu.warnings) add_warning(profile.warnings, w);
  // Missing names or lines matter for the repository's own programs, in proportion to
  // the time spent in them; system libraries never carry debug info.
  for (const auto& [module, info] : collected.cpu.modules) {
    const std::string rel = origin.relative(module);
    if (rel.empty() || info.weight < 0.01 * profile.cpu_total) continue;
    if (!info.symbol_table)
      add_warning(profile.warnings, rel + " is stripped: its functions show as " +
                                        fs::path(rel).filename().string() +
                                        "+0x<offset>; build it unstripped, with -g, to see names and lines");
    else if (!info.debug_info)
      add_warning(profile.warnings, rel + " has no debug info: functions by name only, without file:line "
                                          "(found by name in the sources where possible); build with -g");
  }
  return profile;
}

}  // namespace maxcode

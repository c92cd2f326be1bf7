#include "runner/profile/rank_gpu.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>

#include "runner/util/names.h"
#include "runner/profile/symbolize.h"

namespace maxcode {

namespace {

using HostCache = std::map<std::pair<std::string, std::string>, std::optional<CodeFrame>>;

// A launch shape (grid, block, device) counted once, its launches and times summed.
void add_shape(ProfileEntry& e, const KernelStats& k) {
  auto same = std::find_if(e.shapes.begin(), e.shapes.end(), [&](const KernelStats& s) {
    return s.grid == k.grid && s.block == k.block && s.device == k.device;
  });
  if (same == e.shapes.end()) {
    e.shapes.push_back(k);
    return;
  }
  same->min_ns = std::min(same->min_ns, k.min_ns);
  same->max_ns = std::max(same->max_ns, k.max_ns);
  same->launches += k.launches;
  same->total_ns += k.total_ns;
}

// Where the kernel is defined, from the launching program's debug info (each program's
// symbol looked up once), when that is in the repository.
void locate_by_debug_info(ProfileEntry& e, const std::string& exe, const std::string& symbol, const CodeOrigin& origin,
                          HostCache& cache) {
  auto key = std::make_pair(exe, symbol);
  auto it = cache.find(key);
  if (it == cache.end()) {
    std::error_code ec;
    std::optional<CodeFrame> found;
    if (std::filesystem::exists(exe, ec)) found = find_function_by_symbol(exe, symbol);
    it = cache.emplace(key, found).first;
  }
  if (it->second && !it->second->decl_file.empty() && origin.in_repository(it->second->decl_file)) {
    e.file = origin.relative(it->second->decl_file);
    e.line = it->second->decl_line;
  }
}

}  // namespace

std::vector<ProfileEntry> rank_gpu(const std::vector<GpuSummary>& processes, const CodeOrigin& origin,
                                   SourceIndex* sources) {
  std::map<std::string, ProfileEntry> by_name;
  HostCache host_cache;
  for (const GpuSummary& process : processes) {
    for (const KernelStats& k : process.kernels) {
      const std::string name = demangle(k.name);
      ProfileEntry& e = by_name[name];
      if (e.name.empty()) {
        e.kind = "gpu";
        e.name = name;
        e.function = function_name_of(name);
        if (name != k.name) e.symbol = k.name;
        e.module = process.exe;
      }
      e.self += static_cast<double>(k.total_ns);
      e.total = e.self;
      e.calls += k.launches;
      add_shape(e, k);
      if (e.file.empty() && !process.exe.empty()) locate_by_debug_info(e, process.exe, k.name, origin, host_cache);
    }
  }
  std::vector<ProfileEntry> out;
  for (auto& [name, e] : by_name) {
    if (e.file.empty() && sources && !is_library_function(e.name)) {
      if (auto found = sources->find(e.function)) e.file = found->file, e.line = found->line;
    }
    // CUDA compiles library templates into the program, so the name matters as much
    // as the place; a kernel found nowhere in the repository is someone else's.
    e.external = is_library_function(e.name) || e.file.empty() ||
                 origin.external(e.name, (origin.roots().front() / e.file).string(), "");
    e.in_scope = !e.external && origin.in_scope(e.file);
    std::sort(e.shapes.begin(), e.shapes.end(),
              [](const KernelStats& a, const KernelStats& b) { return a.total_ns > b.total_ns; });
    out.push_back(std::move(e));
  }
  std::sort(out.begin(), out.end(), [](const ProfileEntry& a, const ProfileEntry& b) {
    return a.self != b.self ? a.self > b.self : a.name < b.name;
  });
  return out;
}

}  // namespace maxcode

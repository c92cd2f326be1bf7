#include "runner/profile/launchers.h"

#include <algorithm>
#include <map>

#include "runner/profile/launch_sites.h"

namespace maxcode {

namespace {

std::string last_component(const std::string& name) {
  const std::size_t colon = name.rfind("::");
  return colon == std::string::npos ? name : name.substr(colon + 2);
}

// `ns::k` written at a launch matches the kernel `a::ns::k`; `k` matches any `k`.
bool names_match(const std::string& written, const std::string& kernel) {
  if (written == kernel) return true;
  return kernel.size() > written.size() && kernel.compare(kernel.size() - written.size(), written.size(), written) == 0 &&
         kernel.compare(kernel.size() - written.size() - 2, 2, "::") == 0;
}

}  // namespace

void find_launchers(std::vector<ProfileEntry>& kernels, SourceIndex& sources) {
  if (kernels.empty()) return;
  // Every file's launch sites, once.
  std::map<std::string, std::vector<LaunchSite>> sites;
  for (const std::string& file : sources.files()) {
    std::vector<LaunchSite> found = find_launch_sites(sources.text(file));
    if (!found.empty()) sites.emplace(file, std::move(found));
  }
  for (ProfileEntry& kernel : kernels) {
    if (kernel.external || kernel.function.empty()) continue;
    for (const auto& [file, list] : sites) {
      for (const LaunchSite& site : list) {
        if (!names_match(site.kernel, kernel.function) || site.launcher.empty()) continue;
        const bool seen = std::any_of(kernel.launchers.begin(), kernel.launchers.end(), [&](const KernelLauncher& l) {
          return l.function == site.launcher && l.signature == site.signature && l.file == file;
        });
        if (!seen) kernel.launchers.push_back({site.launcher, site.signature, file, site.line});
      }
    }
    if (!kernel.launchers.empty()) continue;
    // No launch by name: is the name handed around as a value?
    const std::string name = last_component(kernel.function);
    for (const std::string& file : sources.files()) {
      const std::vector<int> uses = value_uses(sources.text(file), name);
      if (uses.empty()) continue;
      kernel.launch_note = "launched only through a pointer: its name is used as a value at " + file + ":" +
                           std::to_string(uses.front()) + ", never launched by name";
      break;
    }
    if (kernel.launch_note.empty())
      kernel.launch_note = "no launch of it found in the sources (no " + name + "<<<...>>> or cudaLaunchKernel(" +
                           name + ", ...))";
  }
}

}  // namespace maxcode

#include "runner/profile/table.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <vector>

namespace maxcode {

namespace {

std::string amount(double value, const std::string& unit) {
  char text[48];
  if (unit == "ns") {
    if (value >= 1e9) std::snprintf(text, sizeof text, "%.3f s", value / 1e9);
    else if (value >= 1e6) std::snprintf(text, sizeof text, "%.2f ms", value / 1e6);
    else std::snprintf(text, sizeof text, "%.1f us", value / 1e3);
  } else if (value >= 1e9) {
    std::snprintf(text, sizeof text, "%.2fG %s", value / 1e9, unit.c_str());
  } else if (value >= 1e6) {
    std::snprintf(text, sizeof text, "%.2fM %s", value / 1e6, unit.c_str());
  } else {
    std::snprintf(text, sizeof text, "%.0f %s", value, unit.c_str());
  }
  return text;
}

// Cut to `width` display columns (names are ASCII), marking the cut.
std::string fit(const std::string& text, std::size_t width) {
  if (text.size() <= width) return text;
  return text.substr(0, width - 3) + "...";
}

std::string where(const ProfileEntry& e) {
  // Library code: the object it lives in says more than a path inside its sources.
  if (e.external && !e.module.empty() && e.kind == "cpu")
    return std::filesystem::path(e.module).filename().string();
  if (!e.file.empty()) return e.line > 0 ? e.file + ":" + std::to_string(e.line) : e.file;
  if (!e.module.empty()) return std::filesystem::path(e.module).filename().string();
  return "?";
}

// The end of a failed benchmark's output, indented: what it said before it stopped.
std::string last_lines(const std::string& text, int count) {
  std::vector<std::string> lines;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    if (end > begin) lines.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  std::string out;
  for (std::size_t i = lines.size() > static_cast<std::size_t>(count) ? lines.size() - count : 0; i < lines.size(); ++i)
    out += "  | " + fit(lines[i], 160) + "\n";
  return out;
}

std::string flags(const ProfileEntry& e) {
  if (e.external) return "external";
  if (!e.in_scope) return "out of scope";
  return "";
}

// Who launches a kernel, as the table's last column says it.
std::string launched_by(const ProfileEntry& e) {
  if (e.external) return "";
  if (e.launchers.empty()) {
    if (e.launch_note.rfind("launched only through a pointer", 0) == 0) return "launched through a pointer";
    return e.launch_note.empty() ? "" : "launcher not found";
  }
  std::string names;
  std::vector<std::string> seen;
  for (const KernelLauncher& l : e.launchers) {
    // Overloads once; a launcher in another file says where (it cannot share a unit).
    const std::string name = l.function + (l.file == e.file ? "" : " (" + l.file + ")");
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) continue;
    seen.push_back(name);
    names += (names.empty() ? "" : ", ") + name;
  }
  return "launched by " + names;
}

// One ranked list: at most `top` rows, none below `min_share`.
std::string render_list(const std::vector<ProfileEntry>& list, const std::string& title, const std::string& unit,
                        int top, double min_share) {
  const bool gpu = title.rfind("GPU", 0) == 0;
  std::string out = title + "\n";
  char line[640];
  std::snprintf(line, sizeof line, "%4s %7s %11s %9s %-48s %-32s %s\n", "#", "share", "time",
                gpu ? "launches" : "calls", gpu ? "kernel" : "function", "where", "");
  out += line;
  int shown = 0;
  for (std::size_t i = 0; i < list.size() && shown < top; ++i) {
    const ProfileEntry& e = list[i];
    if (e.share < min_share) break;
    ++shown;
    const std::string calls = e.calls ? std::to_string(e.calls) : "-";
    std::string note = flags(e);
    if (gpu) {
      const std::string by = launched_by(e);
      if (!by.empty()) note += (note.empty() ? "" : "; ") + by;
    }
    std::snprintf(line, sizeof line, "%4zu %6.1f%% %11s %9s %-48s %-32s %s\n", i + 1, e.share * 100,
                  amount(e.self, unit).c_str(), calls.c_str(), fit(e.name, 48).c_str(), fit(where(e), 32).c_str(),
                  note.c_str());
    out += line;
  }
  if (list.empty()) return out + "   (none)\n";
  if (shown == 0) out += "   (no entry at or above " + std::to_string(min_share * 100).substr(0, 4) + "% of the time)\n";
  const std::size_t hidden = list.size() - static_cast<std::size_t>(shown);
  if (hidden > 0) out += "   ... " + std::to_string(hidden) + " more below the cut (all in profile.json)\n";
  return out;
}

}  // namespace

std::string render_profile_table(const Profile& p, int top, double min_share) {
  std::string out;
  char line[512];
  // Kernels first when there are any: on a GPU program they are what one rewrites.
  if (!p.kernels.empty() || p.gpu_total > 0)
    out += render_list(p.kernels, "GPU kernels, by share of GPU time (" + amount(p.gpu_total, "ns") + ")", "ns", top,
                       min_share) +
           "\n";
  out += render_list(p.functions,
                     "CPU functions, by share of CPU time (" +
                         (p.cpu_total > 0 ? amount(p.cpu_total, p.unit) + (p.unit == "ns" ? " sampled" : "")
                                          : std::string("none")) +
                         ")",
                     p.unit, top, min_share);

  out += "\ntotal: CPU " +
         (p.cpu_total > 0 ? amount(p.cpu_total, p.unit) + (p.unit == "ns" ? " sampled" : "") : std::string("none")) +
         ", GPU " +
         (p.gpu_total > 0 ? amount(p.gpu_total, "ns") : std::string("none")) + "\n";
  for (const BenchmarkRun& r : p.runs) {
    std::snprintf(line, sizeof line, "benchmark %s: %s; wall %.3f s, CPU %.3f s (%llu samples), GPU busy %.3f s",
                  r.name.c_str(), r.outcome.c_str(), r.wall_s, r.cpu_s,
                  static_cast<unsigned long long>(r.samples), r.gpu_busy_s);
    out += line;
    if (r.kernel_launches) {
      std::snprintf(line, sizeof line, " (%llu kernel launches, %.3f s kernels, %.3f s copies)",
                    static_cast<unsigned long long>(r.kernel_launches), r.gpu_kernel_s, r.gpu_transfer_s);
      out += line;
    }
    out += "\n  " + r.bound + ": " + r.bound_reason + (r.partial ? " [partial profile]" : "") + "\n";
    if (r.outcome != "ok") out += last_lines(r.output_tail, 5);
  }
  for (const auto& w : p.warnings) out += "warning: " + w + "\n";
  return out;
}

}  // namespace maxcode

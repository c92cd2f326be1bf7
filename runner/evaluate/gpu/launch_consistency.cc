#include "runner/evaluate/gpu/launch_consistency.h"

#include <algorithm>
#include <cstdio>

namespace maxcode {
namespace {

// The longest launch of a kernel at most this many times its shortest: alike.
constexpr double kAlike = 4;
// ... at least this many times: a costly launch and trivial ones.
constexpr double kSplit = 20;
// Where the original's launches agree within kTight, a candidate's main kernel whose
// launches differ by kSkew does less work on some calls (part of the output only).
constexpr double kTight = 1.5;
constexpr double kSkew = 6;

std::string ms(double ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g ms", ns / 1e6);
  return text;
}

}  // namespace

std::string check_launch_consistency(const RunKernels& original, const RunKernels& candidate,
                                     const KernelSelection& selection, bool durations_alone) {
  std::uint64_t original_total = 0;
  for (const auto& [name, k] : original.kernels)
    if (selection.counts(k)) original_total += k.total_ns;
  if (original_total == 0) return "";
  bool alike = true, tight = true;
  std::uint64_t calls = 0;  // launches per run of the original's main kernels
  for (const auto& [name, k] : original.kernels) {
    if (!selection.counts(k) || k.total_ns * 10 < original_total) continue;
    if (k.launches > 1 && k.max_ns > kAlike * std::max<std::uint64_t>(k.min_ns, 1)) alike = false;
    if (k.launches > 1 && k.max_ns > kTight * std::max<std::uint64_t>(k.min_ns, 1)) tight = false;
    calls = calls == 0 ? k.launches : std::min(calls, k.launches);
  }
  if (!alike) return "";

  std::uint64_t candidate_total = 0;
  for (const auto& [name, k] : candidate.kernels)
    if (selection.counts(k)) candidate_total += k.total_ns;
  if (candidate_total == 0) return "";
  for (const auto& [name, k] : candidate.kernels) {
    if (!durations_alone) break;
    if (!selection.counts(k) || k.launches < 2) continue;
    const bool main = k.total_ns * 2 >= candidate_total;
    const double skew = static_cast<double>(k.max_ns) / std::max<std::uint64_t>(k.min_ns, 1);
    if (skew >= kSplit || (tight && main && skew >= kSkew))
      return "per-launch times of kernel " + k.demangled + " range from " + ms(k.min_ns) + " to " + ms(k.max_ns) +
             " over " + std::to_string(k.launches) + " launches, while the original's launches are alike: a costly "
             "launch followed by trivial ones is a cache, or work skipped on some calls";
  }
  if (calls >= 3) {
    for (const auto& [name, k] : candidate.kernels) {
      if (!selection.counts(k) || k.total_ns * 2 < candidate_total) continue;
      if (k.launches * 3 < calls * 2) {
        char share[16];
        std::snprintf(share, sizeof share, "%.0f%%", 100.0 * k.total_ns / candidate_total);
        return "kernel " + k.demangled + " ran " + std::to_string(k.launches) + " time(s) and did " + share +
               " of the counted work, while the original's kernels run on every call (" + std::to_string(calls) +
               " launches): computing once and launching trivial kernels afterwards is a cache";
      }
    }
  }
  return "";
}

}  // namespace maxcode

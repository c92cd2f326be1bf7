#include "runner/profile/bound.h"

#include <cstdio>

namespace maxcode {

namespace {

constexpr double kGpuBoundBusy = 0.6;
constexpr double kShortKernelS = 20e-6;
constexpr double kManyLaunchesPerS = 1000;

}  // namespace

Boundness classify_boundness(double wall_s, double window_s, double busy_s, std::uint64_t launches,
                             double kernel_s, bool any_gpu) {
  char line[320];
  if (!any_gpu) return {"cpu-only", "no GPU activity recorded"};
  if (window_s <= 0 || window_s > wall_s) window_s = wall_s;
  const double busy = window_s > 0 ? busy_s / window_s : 0;
  const double of_wall = wall_s > 0 ? busy_s / wall_s : 0;
  const double mean_us = launches ? kernel_s / static_cast<double>(launches) * 1e6 : 0;
  const double rate = window_s > 0 ? static_cast<double>(launches) / window_s : 0;
  if (busy >= kGpuBoundBusy) {
    std::snprintf(line, sizeof line, "GPU busy %.0f%% of the %.3f s from its first to its last work (%.0f%% of the "
                  "wall time)", busy * 100, window_s, of_wall * 100);
    return {"gpu-bound", line};
  }
  if (launches > 0 && mean_us <= kShortKernelS * 1e6 && rate >= kManyLaunchesPerS) {
    std::snprintf(line, sizeof line,
                  "GPU busy %.0f%% while in use; %.0f launches/s of %.1f us on average: the GPU idles between "
                  "short kernels",
                  busy * 100, rate, mean_us);
    return {"launch-bound", line};
  }
  std::snprintf(line, sizeof line, "GPU busy only %.0f%% while in use (%.0f%% of the wall time): the host side "
                "dominates", busy * 100, of_wall * 100);
  return {"cpu-bound", line};
}

}  // namespace maxcode

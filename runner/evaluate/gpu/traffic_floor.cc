#include "runner/evaluate/gpu/traffic_floor.h"

#include <cstdio>

namespace maxcode {
namespace {

constexpr double kMinimumShare = 0.01;  // of the original's bytes, per call
constexpr double kMeaningfulBytes = 1e6;

}  // namespace

double bytes_per_call(const std::vector<NcuKernel>& kernels) {
  double bytes = 0;
  for (const NcuKernel& k : kernels) bytes += k.dram_bytes;
  return bytes;
}

std::string check_traffic_floor(const std::vector<NcuKernel>& original, const std::vector<NcuKernel>& candidate) {
  if (original.empty() || candidate.empty()) return "";
  const double had = bytes_per_call(original), has = bytes_per_call(candidate);
  if (had < kMeaningfulBytes || has >= had * kMinimumShare) return "";
  char text[240];
  std::snprintf(text, sizeof text,
                "physics floor: %.1f MB moved per call; the original moves %.1f MB, and a correct version must "
                "read its inputs and write its outputs (at least %.1f MB)",
                has / 1e6, had / 1e6, had * kMinimumShare / 1e6);
  return text;
}

}  // namespace maxcode

#include "runner/evaluate/gpu/witness.h"

#include <algorithm>

#include "runner/util/format.h"

namespace maxcode {
namespace {

constexpr const char* kWho = "out-of-process witness (Nsight Compute): ";

std::string ms(double ns) { return format_numbers("%.3g ms", ns * 1e-6); }

std::string launches(std::uint64_t n) { return std::to_string(n) + (n == 1 ? " kernel launch" : " kernel launches"); }

// Kernel times agree when neither is more than (1 + tolerance) times the other.
bool times_agree(double a, double b, double tolerance) {
  return a <= (1 + tolerance) * b && b <= (1 + tolerance) * a;
}

bool agrees(const WitnessSide& s, double tolerance) {
  return s.ncu_launches == s.cupti_launches && times_agree(s.ncu_ns, s.cupti_ns, tolerance);
}

// "40 kernel launches, 23.1 ms of kernel time per run; the in-process records show 20
// launches, 1.6 ms"
std::string figures(const WitnessSide& s) {
  return launches(s.ncu_launches) + ", " + ms(s.ncu_ns) + " of kernel time per run; the in-process records show " +
         std::to_string(s.cupti_launches) + " launches, " + ms(s.cupti_ns);
}

}  // namespace

KernelWork ncu_work(const std::vector<NcuKernel>& kernels) {
  KernelWork w;
  for (const NcuKernel& k : kernels) {
    w.launches += static_cast<std::uint64_t>(std::max(0, k.launches));
    w.ns += k.total_duration_ns;
  }
  return w;
}

KernelWork cupti_work(const RunKernels& run) {
  KernelWork w;
  for (const auto& [name, k] : run.kernels) {
    w.launches += k.launches;
    w.ns += static_cast<double>(k.total_ns);
  }
  return w;
}

std::string check_original_witness(const WitnessSide& o, double tolerance) {
  if (o.ncu_launches == 0 && o.cupti_launches > 0)
    return "ncu found no kernel in the original's benchmark runs (CUPTI recorded " + std::to_string(o.cupti_launches) +
           " launches)";
  if (!agrees(o, tolerance))
    return "ncu and CUPTI disagree on the original itself: " + figures(o) +
           format_numbers(" (more than %.0f%% apart, or a different count)", 100 * tolerance);
  return {};
}

WitnessRecord judge_witness(const WitnessSide& original, const WitnessSide& candidate, double claimed_speedup,
                            double counted_share, double tolerance) {
  WitnessRecord r;
  r.tolerance = tolerance;
  r.original = original;
  r.candidate = candidate;
  r.claimed_speedup = claimed_speedup;
  r.counted_share = std::clamp(counted_share, 0.0, 1.0);
  // The uncounted part of the kernel time is held to the original's by the timer's own
  // checks (check_against_baseline): the claim over all kernel time is Amdahl's.
  const double f = r.counted_share;
  r.expected_speedup = claimed_speedup > 0 ? 1 / (1 - f + f / claimed_speedup) : 0;
  r.witness_speedup = candidate.ncu_ns > 0 ? original.ncu_ns / candidate.ncu_ns : 0;

  auto reject = [&](const std::string& why) {
    r.status = "rejected";
    r.note = kWho + why;
    return r;
  };
  if (candidate.ncu_launches == 0 && original.ncu_launches > 0)
    return reject("ncu found no kernel in the candidate's benchmark runs; the original's ran " +
                  launches(original.ncu_launches) + ", " + ms(original.ncu_ns) + " of kernel time per run");
  if (!agrees(candidate, tolerance)) {
    const bool unseen = candidate.ncu_launches > candidate.cupti_launches ||
                        candidate.ncu_ns > (1 + tolerance) * candidate.cupti_ns;
    return reject(figures(candidate) +
                  (unseen ? ": the timer did not see the work"
                          : ": the in-process records do not match the work that ran"));
  }
  if (r.expected_speedup > (1 + tolerance) * r.witness_speedup) {
    std::string claim = format_numbers("the claimed %.2fx", claimed_speedup);
    if (f < 0.995) claim += format_numbers(" (%.2fx over all kernel time, of which the timer counts %.0f%%)",
                                           r.expected_speedup, 100 * f);
    return reject("the original's kernels take " + ms(original.ncu_ns) + " per run and the candidate's " +
                  ms(candidate.ncu_ns) + format_numbers(", %.2fx; ", r.witness_speedup) + claim + format_numbers(" is more than %.0f%% above it", 100 * tolerance));
  }
  r.status = "agrees";
  return r;
}

}  // namespace maxcode

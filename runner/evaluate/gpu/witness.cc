#include "runner/evaluate/gpu/witness.h"

#include <algorithm>
#include <cctype>
#include <map>

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

// A kernel's name for matching ncu's to CUPTI's: white space left out.
std::string name_key(const std::string& name) {
  std::string key;
  for (char c : name)
    if (!std::isspace(static_cast<unsigned char>(c))) key += c;
  return key;
}

// CUPTI's kernels of `run` paired with ncu's (an index into `ncu` for each, in `cupti`'s
// order), or empty where no pairing holds: every kernel on each side paired once, with
// the same number of launches.
std::vector<std::size_t> pair_kernels(const std::vector<NcuKernel>& ncu, const std::vector<const KernelTotals*>& cupti) {
  if (ncu.size() != cupti.size()) return {};
  auto same_launches = [&](std::size_t n, const KernelTotals* k) { return ncu[n].launch_ns.size() == k->launches; };
  // By name: ncu prints the demangled name (or, where it has none, the mangled one).
  std::map<std::string, std::size_t> by_name;
  bool unique = true;
  for (std::size_t n = 0; n < ncu.size(); ++n) unique = by_name.emplace(name_key(ncu[n].name), n).second && unique;
  if (unique) {
    std::vector<std::size_t> pairs;
    std::vector<bool> taken(ncu.size(), false);
    for (const KernelTotals* k : cupti) {
      auto it = by_name.find(name_key(k->demangled));
      if (it == by_name.end()) it = by_name.find(name_key(k->name));
      if (it == by_name.end() || taken[it->second] || !same_launches(it->second, k)) break;
      taken[it->second] = true;
      pairs.push_back(it->second);
    }
    if (pairs.size() == cupti.size()) return pairs;
  }
  // By order of first launch: ncu's kernels are in the order its log first shows them,
  // CUPTI's are sorted by first start (pair_kernels' caller).
  std::vector<std::size_t> pairs;
  for (std::size_t i = 0; i < cupti.size(); ++i) {
    if (!same_launches(i, cupti[i])) return {};
    pairs.push_back(i);
  }
  return pairs;
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

WitnessSide witness_side(const std::vector<NcuKernel>& ncu, const RunKernels& run, const KernelSelection& selection) {
  WitnessSide side;
  const KernelWork n = ncu_work(ncu), c = cupti_work(run);
  side.ncu_launches = n.launches;
  side.ncu_ns = n.ns;
  side.cupti_launches = c.launches;
  side.cupti_ns = c.ns;
  side.counted_launches = selection.counted_launches(run);
  side.cupti_counted_ns = 1e9 * selection.seconds(run);

  std::vector<const KernelTotals*> kernels;
  for (const auto& [name, k] : run.kernels)
    if (k.launches > 0) kernels.push_back(&k);
  std::sort(kernels.begin(), kernels.end(), [](const KernelTotals* a, const KernelTotals* b) {
    return a->first_start_ns != b->first_start_ns ? a->first_start_ns < b->first_start_ns : a->name < b->name;
  });
  const std::vector<std::size_t> pairs = pair_kernels(ncu, kernels);
  if (pairs.size() == kernels.size() && ncu.size() == kernels.size()) {
    const std::map<std::string, std::uint64_t> warmup = selection.warmup(run);
    side.per_launch = true;
    for (std::size_t i = 0; i < kernels.size(); ++i) {
      if (!selection.counts(*kernels[i])) continue;
      auto w = warmup.find(kernels[i]->name);
      const std::vector<double>& launch_ns = ncu[pairs[i]].launch_ns;
      const std::size_t skip = std::min<std::size_t>(w == warmup.end() ? 0 : w->second, launch_ns.size());
      for (std::size_t l = skip; l < launch_ns.size(); ++l) side.ncu_counted_ns += launch_ns[l];
    }
  } else {
    side.ncu_counted_ns = side.cupti_ns > 0 ? side.ncu_ns * std::min(1.0, side.cupti_counted_ns / side.cupti_ns) : 0;
  }
  return side;
}

WitnessSide sum_sides(const std::vector<WitnessSide>& sides) {
  WitnessSide total;
  total.per_launch = true;
  for (const WitnessSide& s : sides) {
    total.ncu_launches += s.ncu_launches;
    total.ncu_ns += s.ncu_ns;
    total.cupti_launches += s.cupti_launches;
    total.cupti_ns += s.cupti_ns;
    total.counted_launches += s.counted_launches;
    total.ncu_counted_ns += s.ncu_counted_ns;
    total.cupti_counted_ns += s.cupti_counted_ns;
    total.per_launch = total.per_launch && s.per_launch;
  }
  return total;
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

namespace {

// Why ncu's figure over the launches the timer counts does not bear the claim out
// (`part`: the timer counts only some of the original's kernel time).
std::string counted_disagreement(const WitnessRecord& r, bool part) {
  std::string where;
  if (part)
    where = "on the launches the timer counts (the original's " + std::to_string(r.original.counted_launches) + " of " +
            std::to_string(r.original.cupti_launches) + " per run, the candidate's " +
            std::to_string(r.candidate.counted_launches) + " of " + std::to_string(r.candidate.cupti_launches) + "), ";
  std::string how;
  if (!r.original.per_launch || !r.candidate.per_launch)
    how = " (ncu's launches could not be matched to the timer's: its time split in CUPTI's proportions)";
  return where + "the original's kernels take " + ms(r.original.ncu_counted_ns) + " per run and the candidate's " +
         ms(r.candidate.ncu_counted_ns) + how +
         format_numbers(", %.2fx; the claimed %.2fx", r.witness_speedup, r.claimed_speedup) +
         format_numbers(" is more than %.0f%% above it", 100 * r.tolerance);
}

}  // namespace

WitnessRecord judge_witness(const WitnessSide& original, const WitnessSide& candidate, double claimed_speedup,
                            double tolerance) {
  WitnessRecord r;
  r.tolerance = tolerance;
  r.original = original;
  r.candidate = candidate;
  r.claimed_speedup = claimed_speedup;
  // Like with like: the claim is the timer's, over the launches it counts; ncu's figure
  // is over the same launches of each side.
  r.witness_speedup = candidate.ncu_counted_ns > 0 ? original.ncu_counted_ns / candidate.ncu_counted_ns : 0;
  r.counted_share = original.ncu_ns > 0 ? std::clamp(original.ncu_counted_ns / original.ncu_ns, 0.0, 1.0) : 0;
  r.all_kernels_speedup = candidate.ncu_ns > 0 ? original.ncu_ns / candidate.ncu_ns : 0;
  // The launches the timer does not count are held to the original's launch counts by
  // its own checks (check_against_baseline), not to its time: the claim over all kernel
  // time, were they as long as the original's (Amdahl), is ncu's over all kernel time
  // or less, unless work moved into them.
  const double f = r.counted_share;
  r.expected_speedup = claimed_speedup > 0 ? 1 / (1 - f + f / claimed_speedup) : 0;

  auto reject = [&](const std::string& why) {
    r.status = WitnessStatus::kRejected;
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
  if (claimed_speedup <= 0) {
    r.status = WitnessStatus::kAgrees;
    return r;
  }
  if (claimed_speedup > (1 + tolerance) * r.witness_speedup) return reject(counted_disagreement(r, f < 0.995));
  if (r.expected_speedup > (1 + tolerance) * r.all_kernels_speedup)
    return reject("the launches the timer does not count take " +
                  ms(candidate.ncu_ns - candidate.ncu_counted_ns) + " per run, the original's " +
                  ms(original.ncu_ns - original.ncu_counted_ns) + ": over all kernel time the original's kernels take " +
                  ms(original.ncu_ns) + " and the candidate's " + ms(candidate.ncu_ns) +
                  format_numbers(", %.2fx, and the claimed %.2fx on the counted launches (%.0f%% of the original's "
                                 "kernel time) is %.2fx over all of it, more than %.0f%% above that",
                                 r.all_kernels_speedup, claimed_speedup, 100 * f, r.expected_speedup, 100 * tolerance));
  r.status = WitnessStatus::kAgrees;
  return r;
}

}  // namespace maxcode

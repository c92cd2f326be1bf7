// Coverage benchmark of the speedup estimator (runner/util/stats.h): prints figures,
// judges nothing. Synthetic A/B sessions with a known true speedup, shaped like the
// noise seen on shared machines, go through the estimator maxcode uses now (median of
// per-round ratios) and the one it used before (ratio of medians), side by side:
//
//   coverage   share of sessions whose 95% interval contains the true ratio (R = 1.3)
//   A/A excl.  share of A/A sessions (R = 1) whose interval excludes 1.0
//   floor p50/p95   the A/A noise floor (max(R^, 1/R^)) over A/A sessions
//   false win  share of R = 1 sessions judged significant (lower bound above 1.05 and
//              above the noise floor of an A/A session of the same scenario)
//   smallest   the smallest true speedup judged significant in >= 80% of sessions
//
// Usage: stats_coverage [--sessions N] [--rounds N] [--recorded result.json ...]
// With --recorded, the A/A and A/B sessions of maxcode result files (their per-round
// times) are re-estimated with both estimators instead.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/util/stats.h"

namespace {

using maxcode::RatioInterval;

// Portable normal and uniform deviates (std::mt19937_64's output is fixed by the
// standard; the distributions are not), so the figures are the same on every build.
class Noise {
 public:
  explicit Noise(std::uint64_t seed) : rng_(seed) {}
  double uniform() { return (static_cast<double>(rng_() >> 11) + 0.5) * 0x1p-53; }
  double normal(double sigma) {
    return sigma * std::sqrt(-2.0 * std::log(uniform())) * std::cos(2.0 * std::numbers::pi * uniform());
  }
  double lognormal(double sigma) { return std::exp(normal(sigma)); }

 private:
  std::mt19937_64 rng_;
};

// A scenario gives the time of one run: `base` (1 for the baseline, 1/R for the
// candidate) times the machine's state at that moment. `run` counts the runs of the
// session (two per round, in random order within a round).
struct Scenario {
  const char* name;
  const char* description;
  std::function<void()> reset;
  std::function<double(Noise&, double base, int run, int runs)> time;
};

std::vector<Scenario> scenarios() {
  static double round_factor = 1;
  static int last_round = -1;
  static bool loaded = false;
  std::vector<Scenario> out;
  out.push_back({"jitter+drift", "lognormal jitter 5% per run, 10% per round shared by both runs",
                 [] { last_round = -1; },
                 [](Noise& n, double base, int run, int) {
                   if (run / 2 != last_round) {
                     last_round = run / 2;
                     round_factor = n.lognormal(0.10);
                   }
                   return base * round_factor * n.lognormal(0.05);
                 }});
  out.push_back({"bursts", "load x1.6 switching on (p 0.15) and off (p 0.3) between any two runs, jitter 2%",
                 [] { loaded = false; },
                 [](Noise& n, double base, int, int) {
                   loaded = loaded ? n.uniform() >= 0.3 : n.uniform() < 0.15;
                   return base * (loaded ? 1.6 : 1.0) * n.lognormal(0.02);
                 }});
  out.push_back({"bimodal", "each run independently x1.6 slower with p 0.3, jitter 2%", [] {},
                 [](Noise& n, double base, int, int) {
                   return base * (n.uniform() < 0.3 ? 1.6 : 1.0) * n.lognormal(0.02);
                 }});
  out.push_back({"trend", "times grow linearly by 40% over the session, jitter 3%", [] {},
                 [](Noise& n, double base, int run, int runs) {
                   return base * (1.0 + 0.4 * run / runs) * n.lognormal(0.03);
                 }});
  out.push_back({"bursts+trend", "both of the above, jitter 2%", [] { loaded = false; },
                 [](Noise& n, double base, int run, int runs) {
                   loaded = loaded ? n.uniform() >= 0.3 : n.uniform() < 0.15;
                   return base * (loaded ? 1.6 : 1.0) * (1.0 + 0.4 * run / runs) * n.lognormal(0.02);
                 }});
  return out;
}

struct Session {
  std::vector<double> baseline, candidate;
};

Session simulate(const Scenario& s, Noise& noise, double ratio, int rounds) {
  s.reset();
  Session out;
  for (int r = 0; r < rounds; ++r) {
    const bool baseline_first = noise.uniform() < 0.5;
    double t[2];
    for (int k = 0; k < 2; ++k) {
      const bool baseline_side = (k == 0) == baseline_first;
      t[baseline_side ? 0 : 1] = s.time(noise, baseline_side ? 1.0 : 1.0 / ratio, 2 * r + k, 2 * rounds);
    }
    out.baseline.push_back(t[0]);
    out.candidate.push_back(t[1]);
  }
  return out;
}

using Estimator = RatioInterval (*)(const std::vector<double>&, const std::vector<double>&, int, std::uint64_t);

struct Figures {
  double coverage = 0, aa_excludes = 0, floor_p50 = 0, floor_p95 = 0, false_win = 0, smallest = 0;
};

double quantile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

Figures measure(const Scenario& s, Estimator estimate, int sessions, int rounds, std::uint64_t seed) {
  constexpr int kResamples = 500;  // enough for percentiles here; the product uses 2000
  Figures f;
  Noise noise(seed);
  auto interval = [&](const Session& x) { return estimate(x.baseline, x.candidate, kResamples, 0x9e3779b9); };
  int covered = 0, excludes = 0, false_wins = 0;
  std::vector<double> floors;
  for (int i = 0; i < sessions; ++i) {
    if (interval(simulate(s, noise, 1.3, rounds)).contains(1.3)) ++covered;
    const RatioInterval aa = interval(simulate(s, noise, 1.0, rounds));
    if (!aa.contains(1.0)) ++excludes;
    floors.push_back(maxcode::noise_floor(aa));
    const RatioInterval null_ab = interval(simulate(s, noise, 1.0, rounds));
    if (maxcode::significant(null_ab, 1.05, maxcode::noise_floor(aa))) ++false_wins;
  }
  f.coverage = static_cast<double>(covered) / sessions;
  f.aa_excludes = static_cast<double>(excludes) / sessions;
  f.false_win = static_cast<double>(false_wins) / sessions;
  f.floor_p50 = quantile(floors, 0.5);
  f.floor_p95 = quantile(floors, 0.95);
  f.smallest = 0;
  for (double r : {1.06, 1.08, 1.10, 1.12, 1.15, 1.2, 1.3, 1.5, 2.0}) {
    int detected = 0;
    const int trials = std::max(50, sessions / 4);
    for (int i = 0; i < trials; ++i) {
      const RatioInterval aa = interval(simulate(s, noise, 1.0, rounds));
      if (maxcode::significant(interval(simulate(s, noise, r, rounds)), 1.05, maxcode::noise_floor(aa))) ++detected;
    }
    if (detected >= 0.8 * trials) {
      f.smallest = r;
      break;
    }
  }
  return f;
}

void print_row(const char* scenario, int rounds, const char* estimator, const Figures& f) {
  char smallest[32];
  if (f.smallest > 0) std::snprintf(smallest, sizeof smallest, "%.2fx", f.smallest);
  else std::snprintf(smallest, sizeof smallest, "> 2x");
  std::printf("| %-13s | %2d | %-17s | %5.3f | %5.3f | %5.3f / %5.3f | %5.3f | %-6s |\n", scenario, rounds, estimator,
              f.coverage, f.aa_excludes, f.floor_p50, f.floor_p95, f.false_win, smallest);
}

int recorded(const std::vector<std::string>& files) {
  std::printf("| file | session | rounds | median of ratios [95%%] | ratio of medians [95%%] |\n");
  std::printf("| --- | --- | --- | --- | --- |\n");
  for (const auto& file : files) {
    std::ifstream in(file);
    if (!in) {
      std::fprintf(stderr, "stats_coverage: cannot read %s\n", file.c_str());
      return 1;
    }
    nlohmann::json result;
    try {
      result = nlohmann::json::parse(in);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "stats_coverage: %s is not JSON: %s\n", file.c_str(), e.what());
      return 1;
    }
    std::vector<std::pair<std::string, nlohmann::json>> timings;
    if (result.contains("noise") && result["noise"].contains("baseline_s")) timings.push_back({"A/A", result["noise"]});
    if (result.contains("candidates"))
      for (const auto& c : result["candidates"])
        if (c.contains("timing") && c["timing"].contains("baseline_s"))
          timings.push_back({c.value("id", std::string("candidate")), c["timing"]});
    for (const auto& [label, t] : timings) {
      auto b = t["baseline_s"].get<std::vector<double>>(), c = t["candidate_s"].get<std::vector<double>>();
      if (b.empty() || b.size() != c.size()) continue;
      const RatioInterval now = maxcode::paired_ratio_interval(b, c);
      const RatioInterval before = maxcode::ratio_of_medians_interval(b, c);
      std::printf("| %s | %s | %zu | %.3f [%.3f, %.3f] | %.3f [%.3f, %.3f] |\n", file.c_str(), label.c_str(),
                  b.size(), now.median, now.low, now.high, before.median, before.low, before.high);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int sessions = 1000;
  std::vector<int> rounds{10, 20, 40};
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--sessions") && i + 1 < argc) sessions = std::max(10, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = {std::max(3, std::atoi(argv[++i]))};
    else if (!std::strcmp(argv[i], "--recorded")) {
      while (i + 1 < argc && argv[i + 1][0] != '-') files.push_back(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: stats_coverage [--sessions N] [--rounds N] [--recorded result.json ...]\n");
      return 2;
    }
  }
  if (!files.empty()) return recorded(files);
  std::printf("%d synthetic sessions per row; true speedup 1.3 for coverage; min_speedup 1.05\n\n", sessions);
  for (const Scenario& s : scenarios()) std::printf("- %s: %s\n", s.name, s.description);
  std::printf("\n| scenario      | n  | estimator         | cover | A/A excl. | floor p50 / p95 | false win | smallest |\n");
  std::printf("| --- | --- | --- | --- | --- | --- | --- | --- |\n");
  std::uint64_t seed = 20261123;
  for (const Scenario& s : scenarios()) {
    for (int n : rounds) {
      print_row(s.name, n, "ratio of medians", measure(s, maxcode::ratio_of_medians_interval, sessions, n, seed));
      print_row(s.name, n, "median of ratios", measure(s, maxcode::paired_ratio_interval, sessions, n, seed));
      ++seed;
    }
  }
  return 0;
}

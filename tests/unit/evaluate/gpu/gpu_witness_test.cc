// The out-of-process witness: ncu's real log of a run whose child process launches
// kernels too, the sums on both sides, ncu's launches matched to the ones the timer
// counts, and the decisions for an honest winner and for each trick of issue 17 that
// fooled the in-process timer (figures shaped like the H100 runs: llm.c layernorm,
// ~23 ms of kernel time per run), and for claims far above ncu's at any magnitude
// (issue 21).
#include <gtest/gtest.h>

#include <numeric>

#include "runner/evaluate/gpu/witness.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

using testing::read_file;
using testing::source_path;

// A side whose every launch the timer counts (no warm-up, every kernel timed), matched
// launch by launch.
WitnessSide all_counted(WitnessSide s) {
  s.counted_launches = s.cupti_launches;
  s.ncu_counted_ns = s.ncu_ns;
  s.cupti_counted_ns = s.cupti_ns;
  s.per_launch = true;
  return s;
}

TEST(Witness, SumsEveryLaunchOfEveryProcessInARealNcuLog) {
  // ncu 2025.3.1 on an H100, ncu_duration_argv's flags but --cache-control none (which,
  // on the program of the next test, gave 421.7 us of kernel time against 436.5 us with
  // ncu's default cache flush): a program that launches
  // scale x4 and add<1> x1, then forks and execs itself as a child that launches
  // add<2> x3 (tests/fixtures/gpu/ncu_witness_fork.csv, processes 518 and 535).
  const std::vector<NcuKernel> kernels = parse_ncu_csv(read_file(source_path("tests/fixtures/gpu/ncu_witness_fork.csv")));
  ASSERT_EQ(kernels.size(), 3u);
  EXPECT_EQ(kernels[0].name, "scale(float *, int, float)");
  EXPECT_EQ(kernels[0].launches, 4);
  EXPECT_DOUBLE_EQ(kernels[0].total_duration_ns, 13312.0 + 12864 + 12832 + 13056);
  EXPECT_DOUBLE_EQ(kernels[0].duration_ns, (13312.0 + 12864 + 12832 + 13056) / 4);
  // Each launch's own duration, in launch order (the witness matches them to the
  // launches the timer counts).
  EXPECT_EQ(kernels[0].launch_ns, (std::vector<double>{13312, 12864, 12832, 13056}));
  EXPECT_EQ(kernels[2].name, "void add<2>(float *, int)");  // the child's
  EXPECT_EQ(kernels[2].launches, 3);
  EXPECT_EQ(kernels[2].launch_ns, (std::vector<double>{13472, 13440, 13536}));
  const KernelWork w = ncu_work(kernels);
  EXPECT_EQ(w.launches, 8u);
  EXPECT_DOUBLE_EQ(w.ns, 105216);
  // A run with no kernel: ncu says so in its log and exits 0.
  const std::string none = read_file(source_path("tests/fixtures/gpu/ncu_witness_none.csv"));
  EXPECT_NE(none.find("No kernels were profiled"), std::string::npos);
  EXPECT_EQ(ncu_work(parse_ncu_csv(none)).launches, 0u);
  EXPECT_EQ(ncu_work(parse_ncu_csv(none)).ns, 0);
}

TEST(Witness, RealLogOfTheHiddenChildTrickIsRejected) {
  // ncu 2025.3.1 on an H100 with exactly ncu_duration_argv's flags: the parent launches
  // a decoy x5, removes CUDA_INJECTION64_PATH and LD_PRELOAD from its environment, and
  // forks and execs a child that does the work (x5). ncu followed the child all the same
  // (tests/fixtures/gpu/ncu_witness_hidden_child.csv; tests/gpu/witness_test.cc runs it
  // live). maxcode's CUPTI injection on the same program and GPU recorded the parent's
  // decoys only: 5 launches, 54,944 ns (and, run honestly, 10 launches, 412,805 ns,
  // against ncu's 10 and 421,800 ns).
  const std::vector<NcuKernel> kernels =
      parse_ncu_csv(read_file(source_path("tests/fixtures/gpu/ncu_witness_hidden_child.csv")));
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[1].name, "work(float *, int)");
  const KernelWork ncu = ncu_work(kernels);
  EXPECT_EQ(ncu.launches, 10u);
  EXPECT_DOUBLE_EQ(ncu.ns, 421504);
  const WitnessSide honest = all_counted({10, 421800, 10, 412805});
  EXPECT_EQ(check_original_witness(honest, 0.25), "");
  const WitnessSide trick = all_counted({ncu.launches, ncu.ns, 5, 54944});
  const WitnessRecord r = judge_witness(honest, trick, 412805.0 / 54944, 0.25);
  EXPECT_EQ(r.status, WitnessStatus::kRejected);
  EXPECT_EQ(r.note,
            "out-of-process witness (Nsight Compute): 10 kernel launches, 0.422 ms of kernel time per run; the "
            "in-process records show 5 launches, 0.0549 ms: the timer did not see the work");
}

TEST(Witness, CuptiSideCountsEveryKernelWarmUpIncluded) {
  RunKernels run;
  run.kernels["_Z5scalePfif"] = {"_Z5scalePfif", "scale(float*, int, float)", 4, 52064, 13312};
  run.kernels["_Z3addILi1EEvPfi"] = {"_Z3addILi1EEvPfi", "void add<1>(float*, int)", 1, 12704, 12704};
  const KernelWork w = cupti_work(run);
  EXPECT_EQ(w.launches, 5u);
  EXPECT_DOUBLE_EQ(w.ns, 52064 + 12704);
  EXPECT_EQ(cupti_work(RunKernels{}).launches, 0u);
}

// The original: ncu's time a little above CUPTI's, as on ~20 us kernels.
const WitnessSide kOriginal = all_counted({40, 23.1e6, 40, 21.0e6});

TEST(Witness, AnHonestWinnerAgrees) {
  const WitnessSide winner = all_counted({40, 10.0e6, 40, 8.8e6});
  const WitnessRecord r = judge_witness(kOriginal, winner, 2.35, 0.25);
  EXPECT_EQ(r.status, WitnessStatus::kAgrees) << r.note;
  EXPECT_NEAR(r.witness_speedup, 2.31, 1e-12);
  EXPECT_NEAR(r.all_kernels_speedup, 2.31, 1e-12);
  EXPECT_DOUBLE_EQ(r.expected_speedup, 2.35);
  EXPECT_EQ(describe(r), "witness: ncu 2.31x vs claimed 2.35x (agree within 25%)");
  EXPECT_NEAR(r.candidate.agreement(), 10.0 / 8.8, 1e-12);
}

TEST(Witness, AClaimOverPartOfTheKernelTimeIsJudgedOnThatPartAndOverAllOfIt) {
  // Half the original's kernel time is not timed (a harness kernel the candidate must
  // launch as often as the original): a true 3x on the rest is 3x on the launches the
  // timer counts, and 1.5x of all kernel time.
  const WitnessSide original{40, 20.0e6, 40, 19.0e6, 20, 10.0e6, 9.5e6, true};
  const WitnessSide winner{40, 13.4e6, 40, 12.6e6, 20, 3.4e6, 3.2e6, true};
  const WitnessRecord r = judge_witness(original, winner, 3.0, 0.25);
  EXPECT_EQ(r.status, WitnessStatus::kAgrees) << r.note;
  EXPECT_NEAR(r.witness_speedup, 10.0 / 3.4, 1e-12);
  EXPECT_NEAR(r.counted_share, 0.5, 1e-12);
  EXPECT_NEAR(r.expected_speedup, 1.5, 1e-12);
  EXPECT_NEAR(r.all_kernels_speedup, 20.0 / 13.4, 1e-12);
  EXPECT_EQ(describe(r),
            "witness: ncu 2.94x vs claimed 3.00x on the launches the timer counts (over all kernel time: ncu 1.49x, "
            "the claim 1.50x were the other launches unchanged) (agree within 25%)");
}

TEST(Witness, WorkInAChildProcessWithoutTheInjectionIsRejected) {
  // CUPTI saw the parent's decoys only; ncu followed the child that did the work.
  const WitnessSide winner = all_counted({40, 23.1e6, 20, 1.6e6});
  const WitnessRecord r = judge_witness(kOriginal, winner, 14.1, 0.25);
  EXPECT_EQ(r.status, WitnessStatus::kRejected);
  EXPECT_EQ(r.note,
            "out-of-process witness (Nsight Compute): 40 kernel launches, 23.1 ms of kernel time per run; the "
            "in-process records show 20 launches, 1.6 ms: the timer did not see the work");
  EXPECT_NEAR(r.witness_speedup, 1.0, 1e-12);  // filled in all the same, for the record
}

TEST(Witness, RecordsSwitchedOffAroundTheRealKernelAreRejected) {
  // Launch counts alone give it away, whatever the times.
  const WitnessSide winner = all_counted({40, 23.0e6, 39, 23.0e6});
  const WitnessRecord r = judge_witness(kOriginal, winner, 1.3, 0.25);
  EXPECT_EQ(r.status, WitnessStatus::kRejected);
  EXPECT_EQ(r.note,
            "out-of-process witness (Nsight Compute): 40 kernel launches, 23 ms of kernel time per run; the "
            "in-process records show 39 launches, 23 ms: the timer did not see the work");
}

TEST(Witness, RewrittenActivityFilesAreRejected) {
  // Every launch recorded, every duration divided by 3.
  const WitnessSide winner = all_counted({40, 23.1e6, 40, 7.7e6});
  const WitnessRecord r = judge_witness(kOriginal, winner, 3.0, 0.25);
  EXPECT_EQ(r.status, WitnessStatus::kRejected);
  EXPECT_EQ(r.note,
            "out-of-process witness (Nsight Compute): 40 kernel launches, 23.1 ms of kernel time per run; the "
            "in-process records show 40 launches, 7.7 ms: the timer did not see the work");
  // Records that show more than ran are no better.
  const WitnessRecord more = judge_witness(kOriginal, all_counted({40, 10.0e6, 40, 20.0e6}), 1.2, 0.25);
  EXPECT_EQ(more.status, WitnessStatus::kRejected);
  EXPECT_NE(more.note.find(": the in-process records do not match the work that ran"), std::string::npos) << more.note;
}

TEST(Witness, AClaimTheWitnessedSpeedupDoesNotBearOutIsRejected) {
  // Unique kernel names per call: CUPTI recorded everything (so both sides agree), but
  // the timer counted only decoys and claimed 14.1x. ncu times the decoys as CUPTI did
  // (14.15x on the counted launches), and sees the same work as before in the launches
  // the timer left out: the claim, stated over all kernel time with those launches as
  // long as the original's, is 11.18x against ncu's 0.98x.
  const WitnessSide original{40, 23.1e6, 40, 21.0e6, 20, 22.64e6, 20.58e6, true};
  const WitnessSide winner{60, 23.5e6, 60, 21.4e6, 20, 1.6e6, 1.46e6, true};
  const WitnessRecord r = judge_witness(original, winner, 14.1, 0.25);
  EXPECT_EQ(r.status, WitnessStatus::kRejected);
  EXPECT_NEAR(r.witness_speedup, 22.64 / 1.6, 1e-12);
  EXPECT_EQ(r.note,
            "out-of-process witness (Nsight Compute): the launches the timer does not count take 21.9 ms per run, "
            "the original's 0.46 ms: over all kernel time the original's kernels take 23.1 ms and the candidate's "
            "23.5 ms, 0.98x, and the claimed 14.10x on the counted launches (98% of the original's kernel time) is "
            "11.18x over all of it, more than 25% above that");
}

TEST(Witness, TheToleranceIsInclusive) {
  // ncu exactly 25% above CUPTI agrees; a little more does not.
  EXPECT_EQ(judge_witness(kOriginal, all_counted({40, 12.5e6, 40, 10.0e6}), 1.8, 0.25).status, WitnessStatus::kAgrees);
  EXPECT_EQ(judge_witness(kOriginal, all_counted({40, 12.6e6, 40, 10.0e6}), 1.8, 0.25).status,
            WitnessStatus::kRejected);
  // The claim may be up to (1 + tolerance) times the witnessed speedup.
  const WitnessSide winner = all_counted({40, 11.55e6, 40, 10.5e6});  // ncu: 2.00x
  EXPECT_EQ(judge_witness(kOriginal, winner, 2.5, 0.25).status, WitnessStatus::kAgrees);
  EXPECT_EQ(judge_witness(kOriginal, winner, 2.52, 0.25).status, WitnessStatus::kRejected);
}

TEST(Witness, NoClaimToCompareLeavesTheRecordsToJudge) {
  // Wall-time benchmarks beside the kernel ones: the claim is not kernel time alone.
  const WitnessRecord r = judge_witness(kOriginal, all_counted({40, 23.0e6, 40, 21.5e6}), 0, 0.25);
  EXPECT_EQ(r.status, WitnessStatus::kAgrees) << r.note;
  EXPECT_EQ(describe(r),
            "witness: ncu 1.00x (speedups not compared: the claim also covers benchmarks timed by wall clock) "
            "(agree within 25%)");
  EXPECT_EQ(judge_witness(kOriginal, all_counted({40, 23.0e6, 20, 1.5e6}), 0, 0.25).status, WitnessStatus::kRejected);
}

TEST(Witness, NoKernelUnderNcuWhereTheOriginalHadSomeIsRejected) {
  const WitnessRecord r = judge_witness(kOriginal, all_counted({0, 0, 20, 1.6e6}), 14.1, 0.25);
  EXPECT_EQ(r.status, WitnessStatus::kRejected);
  EXPECT_EQ(r.note,
            "out-of-process witness (Nsight Compute): ncu found no kernel in the candidate's benchmark runs; the "
            "original's ran 40 kernel launches, 23.1 ms of kernel time per run");
  EXPECT_EQ(r.witness_speedup, 0);
}

TEST(Witness, AnOriginalWhoseOwnFiguresDisagreeCannotJudge) {
  EXPECT_EQ(check_original_witness(kOriginal, 0.25), "");
  EXPECT_EQ(check_original_witness(WitnessSide{0, 0, 40, 21.0e6}, 0.25),
            "ncu found no kernel in the original's benchmark runs (CUPTI recorded 40 launches)");
  EXPECT_EQ(check_original_witness(WitnessSide{41, 23.1e6, 40, 21.0e6}, 0.25),
            "ncu and CUPTI disagree on the original itself: 41 kernel launches, 23.1 ms of kernel time per run; the "
            "in-process records show 40 launches, 21 ms (more than 25% apart, or a different count)");
  // Neither ran a kernel: nothing to disagree about.
  EXPECT_EQ(check_original_witness(WitnessSide{}, 0.25), "");
}

// --- The same launches on both sides (issue 21) -----------------------------------
//
// A benchmark that calls the target 10 times, its first launch left out as warm-up
// (warmup_launches 1): the timer counts 9 of 10 launches. Per launch, in launch order.

// CUPTI's records of one kernel in a run: its launches' durations, first started at
// `start` (ns on the GPU's clock).
KernelTotals cupti_kernel(const std::string& mangled, const std::string& demangled, const std::vector<double>& ns,
                          std::uint64_t start) {
  KernelTotals k;
  k.name = mangled;
  k.demangled = demangled;
  k.launches = ns.size();
  k.total_ns = static_cast<std::uint64_t>(std::accumulate(ns.begin(), ns.end(), 0.0));
  k.first_launch_ns = static_cast<std::uint64_t>(ns.front());
  k.min_ns = static_cast<std::uint64_t>(*std::min_element(ns.begin(), ns.end()));
  k.max_ns = static_cast<std::uint64_t>(*std::max_element(ns.begin(), ns.end()));
  k.first_start_ns = start;
  return k;
}

RunKernels cupti_run(const std::vector<KernelTotals>& kernels) {
  RunKernels run;
  for (const KernelTotals& k : kernels) run.kernels[k.name] = k;
  return run;
}

// ncu's view of one kernel: as parse_ncu_csv leaves it.
NcuKernel ncu_kernel(const std::string& name, const std::vector<double>& ns) {
  NcuKernel k;
  k.name = name;
  k.launches = static_cast<int>(ns.size());
  k.launch_ns = ns;
  k.total_duration_ns = std::accumulate(ns.begin(), ns.end(), 0.0);
  k.duration_ns = k.total_duration_ns / static_cast<double>(ns.size());
  return k;
}

std::vector<double> launches(std::size_t n, double first_ns, double rest_ns) {
  std::vector<double> ns(n, rest_ns);
  ns[0] = first_ns;
  return ns;
}

constexpr const char* kWork = "_Z4workPfi";
constexpr const char* kWorkDemangled = "work(float*, int)";
constexpr const char* kWorkByNcu = "work(float *, int)";  // ncu's spelling

// The timer's selection: every kernel of the target, the first launch of the
// original's one kernel left out as warm-up.
KernelSelection ten_calls_selection() { return KernelSelection({}, {kWork}, 1); }

// One version's side: CUPTI's records and ncu's of ten calls, their launches as given.
WitnessSide ten_calls(const std::vector<double>& cupti_ns, const std::vector<double>& ncu_ns) {
  return witness_side({ncu_kernel(kWorkByNcu, ncu_ns)}, cupti_run({cupti_kernel(kWork, kWorkDemangled, cupti_ns, 100)}),
                      ten_calls_selection());
}

// The original: 1.2 ms a call, the first 1.5 ms (cold caches); ncu a little above CUPTI.
WitnessSide ten_call_original() {
  return ten_calls(launches(10, 1.5e6, 1.2e6), launches(10, 1.53e6, 1.22e6));
}

TEST(Witness, NcusLaunchesAreMatchedToTheOnesTheTimerCounts) {
  // ncu spells the name "float *", the demangler "float*": the same kernel. Its first
  // launch is the timer's warm-up; ncu's other 9 are summed.
  const WitnessSide o = ten_call_original();
  EXPECT_TRUE(o.per_launch);
  EXPECT_EQ(o.ncu_launches, 10u);
  EXPECT_EQ(o.cupti_launches, 10u);
  EXPECT_EQ(o.counted_launches, 9u);
  EXPECT_DOUBLE_EQ(o.ncu_counted_ns, 9 * 1.22e6);
  EXPECT_DOUBLE_EQ(o.cupti_counted_ns, 9 * 1.2e6);
  EXPECT_DOUBLE_EQ(o.ncu_ns, 1.53e6 + 9 * 1.22e6);

  // A kernel the timer does not count (a harness kernel outside `kernels`) is left out
  // of ncu's counted time; kernels whose names ncu prints otherwise are matched by order
  // of first launch.
  const KernelSelection only_work({"work"}, {kWork, "_Z7harnessPf"}, 1);
  const RunKernels run = cupti_run({cupti_kernel("_Z7harnessPf", "harness(float*)", {5e5, 5e5}, 50),
                                    cupti_kernel(kWork, kWorkDemangled, launches(10, 1.5e6, 1.2e6), 100)});
  const WitnessSide by_name = witness_side(
      {ncu_kernel("harness(float *)", {5.1e5, 5.1e5}), ncu_kernel(kWorkByNcu, launches(10, 1.53e6, 1.22e6))}, run,
      only_work);
  EXPECT_TRUE(by_name.per_launch);
  EXPECT_DOUBLE_EQ(by_name.ncu_counted_ns, 9 * 1.22e6);
  EXPECT_EQ(by_name.counted_launches, 9u);
  const WitnessSide by_order = witness_side(
      {ncu_kernel("harness", {5.1e5, 5.1e5}), ncu_kernel("work", launches(10, 1.53e6, 1.22e6))}, run, only_work);
  EXPECT_TRUE(by_order.per_launch);
  EXPECT_DOUBLE_EQ(by_order.ncu_counted_ns, 9 * 1.22e6);

  // No match (ncu saw another number of launches of a kernel): ncu's time is split in
  // CUPTI's proportions.
  const WitnessSide split =
      witness_side({ncu_kernel(kWorkByNcu, launches(11, 1.53e6, 1.22e6))},
                   cupti_run({cupti_kernel(kWork, kWorkDemangled, launches(10, 1.5e6, 1.2e6), 100)}),
                   ten_calls_selection());
  EXPECT_FALSE(split.per_launch);
  EXPECT_NEAR(split.ncu_counted_ns, split.ncu_ns * (9 * 1.2e6) / (1.5e6 + 9 * 1.2e6), 1e-3);

  // Benchmarks summed; matched only where each was.
  const WitnessSide both = sum_sides({o, split});
  EXPECT_FALSE(both.per_launch);
  EXPECT_EQ(both.counted_launches, 18u);
  EXPECT_DOUBLE_EQ(both.ncu_counted_ns, o.ncu_counted_ns + split.ncu_counted_ns);
  EXPECT_TRUE(sum_sides({o, o}).per_launch);
}

TEST(Witness, AClaimTwiceNcusOnTheCountedLaunchesIsRejected) {
  // The candidate really is 12x faster on every call, its first too; both sides of it
  // agree. The claim is 24x: the A/B median over the counted launches, twice what ncu
  // times on those same launches. Stated over all kernel time the claim would be only
  // 6.29x against ncu's 12x there, which the old comparison let pass.
  const WitnessSide o = ten_call_original();
  const WitnessSide k = ten_calls(launches(10, 0.1e6, 0.1e6), launches(10, 1.53e6 / 12, 1.22e6 / 12));
  ASSERT_EQ(check_original_witness(o, 0.25), "");
  const WitnessRecord r = judge_witness(o, k, 24.0, 0.25);
  EXPECT_EQ(r.status, WitnessStatus::kRejected);
  EXPECT_NEAR(r.witness_speedup, 12.0, 1e-9);
  EXPECT_NEAR(r.expected_speedup, 6.29, 0.005);  // over all kernel time it would pass:
  EXPECT_NEAR(r.all_kernels_speedup, 12.0, 1e-9);
  EXPECT_EQ(r.note,
            "out-of-process witness (Nsight Compute): on the launches the timer counts (the original's 9 of 10 per "
            "run, the candidate's 9 of 10), the original's kernels take 11 ms per run and the candidate's 0.915 ms, "
            "12.00x; the claimed 24.00x is more than 25% above it");
  EXPECT_EQ(describe(r), "witness rejected: " + r.note);
}

TEST(Witness, AnHonestClaimOf12xAgreesWithNcus12x) {
  const WitnessSide o = ten_call_original();
  const WitnessSide k = ten_calls(launches(10, 0.1e6, 0.1e6), launches(10, 1.53e6 / 12, 1.22e6 / 12));
  const WitnessRecord r = judge_witness(o, k, 12.0, 0.25);
  EXPECT_EQ(r.status, WitnessStatus::kAgrees) << r.note;
  EXPECT_NEAR(r.witness_speedup, 12.0, 1e-9);
  EXPECT_EQ(describe(r),
            "witness: ncu 12.00x vs claimed 12.00x on the launches the timer counts (over all kernel time: ncu 12.00x, "
            "the claim 5.12x were the other launches unchanged) (agree within 25%)");
  // Up to the tolerance above ncu's, and no further.
  EXPECT_EQ(judge_witness(o, k, 14.9, 0.25).status, WitnessStatus::kAgrees);
  EXPECT_EQ(judge_witness(o, k, 15.1, 0.25).status, WitnessStatus::kRejected);
}

TEST(Witness, AnUncountedFirstLaunchNoLongerCapsTheWitnessNear10x) {
  // Ten calls, the first not counted: stated over all kernel time, no claim exceeds
  // 1 / (1 - 0.9) = 10x, so the old comparison could reject none while ncu showed 8x or
  // more. Over the counted launches ncu's figure is what it is: 40x here.
  const WitnessSide o = ten_call_original();
  const WitnessSide fast = ten_calls(launches(10, 0.03e6, 0.03e6), launches(10, 1.53e6 / 40, 1.22e6 / 40));
  const WitnessRecord honest = judge_witness(o, fast, 40.0, 0.25);
  EXPECT_EQ(honest.status, WitnessStatus::kAgrees) << honest.note;
  EXPECT_NEAR(honest.witness_speedup, 40.0, 1e-9);
  EXPECT_GT(honest.witness_speedup, 10.0);
  EXPECT_LT(honest.expected_speedup, 10.0);
  const WitnessRecord inflated = judge_witness(o, fast, 100.0, 0.25);
  EXPECT_EQ(inflated.status, WitnessStatus::kRejected);
  EXPECT_NE(inflated.note.find(", 40.00x; the claimed 100.00x is more than 25% above it"), std::string::npos)
      << inflated.note;
  // The same where the candidate's first launch is as slow as the original's (the case
  // the old arithmetic assumed): 40x on the counted launches all the same.
  const WitnessSide slow_first = ten_calls(launches(10, 1.5e6, 0.03e6), launches(10, 1.53e6, 1.22e6 / 40));
  const WitnessRecord same = judge_witness(o, slow_first, 40.0, 0.25);
  EXPECT_EQ(same.status, WitnessStatus::kAgrees) << same.note;
  EXPECT_NEAR(same.witness_speedup, 40.0, 1e-9);
  EXPECT_EQ(judge_witness(o, slow_first, 100.0, 0.25).status, WitnessStatus::kRejected);
}

TEST(Witness, RecordsThatMoveTimeIntoTheWarmUpAreSeenLaunchByLaunch) {
  // The candidate's records keep the true total (5 ms, as ncu sees) but put it all on
  // the first launch, which the timer leaves out: the timer claims 10x. ncu's own
  // launches show 2x on the counted ones. (Split in CUPTI's proportions instead, ncu's
  // figure would have borne the claim out.)
  const WitnessSide o = ten_calls(launches(10, 1.0e6, 1.0e6), launches(10, 1.0e6, 1.0e6));
  const WitnessSide k = ten_calls(launches(10, 4.1e6, 0.1e6), launches(10, 0.5e6, 0.5e6));
  EXPECT_TRUE(k.per_launch);
  EXPECT_DOUBLE_EQ(k.ncu_ns, k.cupti_ns);  // the totals agree
  const WitnessRecord r = judge_witness(o, k, 10.0, 0.25);
  EXPECT_EQ(r.status, WitnessStatus::kRejected);
  EXPECT_NEAR(r.witness_speedup, 2.0, 1e-12);
  EXPECT_EQ(r.note,
            "out-of-process witness (Nsight Compute): on the launches the timer counts (the original's 9 of 10 per "
            "run, the candidate's 9 of 10), the original's kernels take 9 ms per run and the candidate's 4.5 ms, "
            "2.00x; the claimed 10.00x is more than 25% above it");
}

}  // namespace
}  // namespace maxcode

// The out-of-process witness: ncu's real log of a run whose child process launches
// kernels too, the sums on both sides, and the decisions for an honest winner and for
// each trick of issue 17 that fooled the in-process timer (figures shaped like the
// H100 runs: llm.c layernorm, ~23 ms of kernel time per run).
#include <gtest/gtest.h>

#include "runner/evaluate/gpu/witness.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

using testing::read_file;
using testing::source_path;

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
  EXPECT_EQ(kernels[2].name, "void add<2>(float *, int)");  // the child's
  EXPECT_EQ(kernels[2].launches, 3);
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
  const WitnessSide honest{10, 421800, 10, 412805};
  EXPECT_EQ(check_original_witness(honest, 0.25), "");
  const WitnessSide trick{ncu.launches, ncu.ns, 5, 54944};
  const WitnessRecord r = judge_witness(honest, trick, 412805.0 / 54944, 1.0, 0.25);
  EXPECT_EQ(r.status, "rejected");
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
const WitnessSide kOriginal{40, 23.1e6, 40, 21.0e6};

TEST(Witness, AnHonestWinnerAgrees) {
  const WitnessSide winner{40, 10.0e6, 40, 8.8e6};
  const WitnessRecord r = judge_witness(kOriginal, winner, 2.35, 1.0, 0.25);
  EXPECT_EQ(r.status, "agrees") << r.note;
  EXPECT_NEAR(r.witness_speedup, 2.31, 1e-12);
  EXPECT_DOUBLE_EQ(r.expected_speedup, 2.35);
  EXPECT_EQ(describe(r), "witness: ncu 2.31x vs claimed 2.35x (agree within 25%)");
  EXPECT_NEAR(r.candidate.agreement(), 10.0 / 8.8, 1e-12);
}

TEST(Witness, AClaimOverPartOfTheKernelTimeIsJudgedOverAllOfIt) {
  // Half the original's kernel time is not timed (a harness kernel the candidate must
  // launch as often as the original): a true 3x on the rest is 1.5x of all kernel time.
  const WitnessSide original{40, 20.0e6, 40, 19.0e6}, winner{40, 13.4e6, 40, 12.6e6};
  const WitnessRecord r = judge_witness(original, winner, 3.0, 0.5, 0.25);
  EXPECT_EQ(r.status, "agrees") << r.note;
  EXPECT_NEAR(r.expected_speedup, 1.5, 1e-12);
  EXPECT_EQ(describe(r), "witness: ncu 1.49x vs claimed 3.00x (1.50x over all kernel time) (agree within 25%)");
}

TEST(Witness, WorkInAChildProcessWithoutTheInjectionIsRejected) {
  // CUPTI saw the parent's decoys only; ncu followed the child that did the work.
  const WitnessSide winner{40, 23.1e6, 20, 1.6e6};
  const WitnessRecord r = judge_witness(kOriginal, winner, 14.1, 1.0, 0.25);
  EXPECT_EQ(r.status, "rejected");
  EXPECT_EQ(r.note,
            "out-of-process witness (Nsight Compute): 40 kernel launches, 23.1 ms of kernel time per run; the "
            "in-process records show 20 launches, 1.6 ms: the timer did not see the work");
  EXPECT_NEAR(r.witness_speedup, 1.0, 1e-12);  // filled in all the same, for the record
}

TEST(Witness, RecordsSwitchedOffAroundTheRealKernelAreRejected) {
  // Launch counts alone give it away, whatever the times.
  const WitnessSide winner{40, 23.0e6, 39, 23.0e6};
  const WitnessRecord r = judge_witness(kOriginal, winner, 1.3, 1.0, 0.25);
  EXPECT_EQ(r.status, "rejected");
  EXPECT_EQ(r.note,
            "out-of-process witness (Nsight Compute): 40 kernel launches, 23 ms of kernel time per run; the "
            "in-process records show 39 launches, 23 ms: the timer did not see the work");
}

TEST(Witness, RewrittenActivityFilesAreRejected) {
  // Every launch recorded, every duration divided by 3.
  const WitnessSide winner{40, 23.1e6, 40, 7.7e6};
  const WitnessRecord r = judge_witness(kOriginal, winner, 3.0, 1.0, 0.25);
  EXPECT_EQ(r.status, "rejected");
  EXPECT_EQ(r.note,
            "out-of-process witness (Nsight Compute): 40 kernel launches, 23.1 ms of kernel time per run; the "
            "in-process records show 40 launches, 7.7 ms: the timer did not see the work");
  // Records that show more than ran are no better.
  const WitnessRecord more = judge_witness(kOriginal, WitnessSide{40, 10.0e6, 40, 20.0e6}, 1.2, 1.0, 0.25);
  EXPECT_EQ(more.status, "rejected");
  EXPECT_NE(more.note.find(": the in-process records do not match the work that ran"), std::string::npos) << more.note;
}

TEST(Witness, AClaimTheWitnessedSpeedupDoesNotBearOutIsRejected) {
  // Unique kernel names per call: CUPTI recorded everything (so both sides agree), but
  // the timer counted only decoys and claimed 14.1x; ncu sees the same work as before.
  const WitnessSide winner{60, 23.5e6, 60, 21.4e6};
  const WitnessRecord r = judge_witness(kOriginal, winner, 14.1, 0.98, 0.25);
  EXPECT_EQ(r.status, "rejected");
  EXPECT_EQ(r.note,
            "out-of-process witness (Nsight Compute): the original's kernels take 23.1 ms per run and the "
            "candidate's 23.5 ms, 0.98x; the claimed 14.10x (11.17x over all kernel time, of which the timer counts "
            "98%) is more than 25% above it");
}

TEST(Witness, TheToleranceIsInclusive) {
  // ncu exactly 25% above CUPTI agrees; a little more does not.
  EXPECT_EQ(judge_witness(kOriginal, WitnessSide{40, 12.5e6, 40, 10.0e6}, 1.8, 1.0, 0.25).status, "agrees");
  EXPECT_EQ(judge_witness(kOriginal, WitnessSide{40, 12.6e6, 40, 10.0e6}, 1.8, 1.0, 0.25).status, "rejected");
  // The claim may be up to (1 + tolerance) times the witnessed speedup.
  const WitnessSide winner{40, 11.55e6, 40, 10.5e6};  // ncu: 2.00x
  EXPECT_EQ(judge_witness(kOriginal, winner, 2.5, 1.0, 0.25).status, "agrees");
  EXPECT_EQ(judge_witness(kOriginal, winner, 2.52, 1.0, 0.25).status, "rejected");
}

TEST(Witness, NoClaimToCompareLeavesTheRecordsToJudge) {
  // Wall-time benchmarks beside the kernel ones: the claim is not kernel time alone.
  const WitnessRecord r = judge_witness(kOriginal, WitnessSide{40, 23.0e6, 40, 21.5e6}, 0, 1.0, 0.25);
  EXPECT_EQ(r.status, "agrees") << r.note;
  EXPECT_EQ(describe(r),
            "witness: ncu 1.00x (speedups not compared: the claim also covers benchmarks timed by wall clock) "
            "(agree within 25%)");
  EXPECT_EQ(judge_witness(kOriginal, WitnessSide{40, 23.0e6, 20, 1.5e6}, 0, 1.0, 0.25).status, "rejected");
}

TEST(Witness, NoKernelUnderNcuWhereTheOriginalHadSomeIsRejected) {
  const WitnessRecord r = judge_witness(kOriginal, WitnessSide{0, 0, 20, 1.6e6}, 14.1, 1.0, 0.25);
  EXPECT_EQ(r.status, "rejected");
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

}  // namespace
}  // namespace maxcode

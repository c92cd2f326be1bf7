// Per-call consistency on the GPU, from the CUPTI totals of one benchmark run: the
// counted work must be spread over the launches as the original's is.
//
// A candidate that computes once per set of pointers and afterwards launches only a
// trivial kernel shows either one kernel with a costly launch and trivial ones (the
// longest launch twenty times the shortest, where the original's launches of every
// kernel are alike), or a kernel that runs on a few calls only yet does most of the
// counted work (launched fewer times than two thirds of the original's per-call count,
// the least launch count among the original's kernels that hold a tenth of its time).
// Both are rejected with the figures; an original whose own launches vary is no
// yardstick, and the check stays silent for it.
//
// The first rule reads durations, which another program's kernels on the same GPU
// stretch: one launch of an honest tiled kernel took 10x the others in a check run
// that overlapped another candidate's (examples/cuda-ops on an H200). It is applied
// only where `durations_alone` says the run held the GPU alone (a timed run, under the
// exclusive timing lock); the count rule holds anywhere. Every timed run is checked, so
// a cache that passes the check runs is caught in its first timed round.
#pragma once

#include <string>

#include "runner/evaluate/gpu/kernel_time.h"

namespace maxcode {

// Empty when the candidate's counted launches are alike, else the reason.
std::string check_launch_consistency(const RunKernels& original, const RunKernels& candidate,
                                     const KernelSelection& selection, bool durations_alone = true);

}  // namespace maxcode

// The driver calls of a benchmark run against its kernel records: every kernel launch
// must have left a record, and the calls that move work out of the timer's sight must
// not appear where the original made none.
//
// Code in the benchmark process can switch CUPTI's activity recording off around its
// real kernel (cuptiActivityDisable, reached through dlopen of libcupti) and leave a
// cheap decoy to be timed; its launch call is still counted by the injection's CUPTI
// callbacks (runner/inject/cupti_injection.cc), so records fewer than launches show it.
// CUDA IPC hands the benchmark's buffers to another process, whose kernels no timer of
// ours sees; a context of its own is how such work starts. Graph launches run kernels
// without a launch call each: their records are not matched against calls.
#pragma once

#include <string>

#include "runner/evaluate/gpu/kernel_time.h"

namespace maxcode {

// Empty when the candidate's calls are accounted for, else why it is rejected:
// - a process whose calls were not counted (CUPTI's callbacks taken by the program,
//   or finalized), where the original's were;
// - a process that ended without its final summary (its report cut off: a closed
//   channel, an abnormal end), where every process of the original's run reported one;
// - kernel launches without a record, beyond the records CUPTI reports dropped and
//   beyond what the original's run left unrecorded;
// - CUDA IPC calls the original did not make;
// - more contexts created (cuCtxCreate*, cuGreenCtxCreate) than the original.
std::string check_launch_audit(const RunKernels& original, const RunKernels& candidate);

}  // namespace maxcode

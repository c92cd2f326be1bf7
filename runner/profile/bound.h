// What limits a program that uses the GPU: the GPU itself (busy most of the wall
// time), kernel launches (many short kernels with idle gaps between them), or the CPU
// side (the GPU waits for the host). Named so that a user does not optimize kernels
// of a program whose time goes elsewhere.
#pragma once

#include <cstdint>
#include <string>

namespace maxcode {

struct Boundness {
  std::string kind;    // "cpu-only", "cpu-bound", "launch-bound", "gpu-bound"
  std::string reason;  // one line with the numbers behind it
};

// Thresholds: GPU busy >= 60% of the wall time is GPU-bound; below that, kernels of
// 20 us or less on average at 1000 launches per second or more are launch-bound;
// anything else is CPU-bound. No GPU activity at all is cpu-only.
Boundness classify_boundness(double wall_s, double gpu_busy_s, std::uint64_t kernel_launches,
                             double kernel_s, bool any_gpu_activity);

}  // namespace maxcode

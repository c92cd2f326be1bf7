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

// Judged over the GPU's active window (first GPU activity to last), so that CUDA's
// start-up and host-side setup before the first kernel do not hide a GPU-bound
// program; the reason also gives the share of the whole wall time. GPU busy >= 60% of
// the window is GPU-bound; below that, kernels of 20 us or less on average at 1000
// launches per second or more are launch-bound; anything else is CPU-bound. No GPU
// activity at all is cpu-only.
Boundness classify_boundness(double wall_s, double gpu_window_s, double gpu_busy_s,
                             std::uint64_t kernel_launches, double kernel_s, bool any_gpu_activity);

}  // namespace maxcode

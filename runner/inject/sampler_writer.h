// Writing the sampler's profile file: at exit, before exec, or from a fatal signal's
// handler, so every step is async-signal-safe (raw system calls, a static buffer, no
// allocation). The format is text; docs/profiling.md "Sampler file" describes it and
// runner/profile/sampler_file.cc reads it.
#pragma once

#include <cstdint>

#include "runner/inject/sampler_table.h"

namespace maxcode::sampler {

struct ProcessFacts {
  long pid = 0;
  long ppid = 0;
  long interval_us = 0;
  std::uint64_t samples = 0;  // SIGPROF deliveries handled
  std::uint64_t dropped = 0;  // of those, stacks the table had no room for
  std::uint64_t wall_ns = 0;  // since sampling started in this process
  const char* status = "exit";  // "exit", "exec" or "signal"
  int signal = 0;               // with "signal"
};

// "<dir>/cpu-<pid>-<stamp>.txt" into out[size]; false if it does not fit.
bool profile_path(char* out, int size, const char* dir, long pid, std::uint64_t stamp);

// Writes the whole file (header, /proc/self/maps, stacks). False on any failure.
bool write_profile(const char* path, const ProcessFacts& facts, const StackTable& table);

}  // namespace maxcode::sampler

// How long tasks on this machine waited for a CPU: the kernel's pressure stall
// information (/proc/pressure/cpu, Linux 4.20+). A timed run that shares its CPUs is
// preempted in proportion to its length, the longer original more than a short
// candidate, so a ratio of wall times taken on a loaded machine reads high; the timer
// records how contended each timed run was, so that a reader sees it beside the claim.
#pragma once

#include <optional>
#include <string_view>

namespace maxcode {

// The "some" line's total: seconds during which at least one runnable task waited for
// a CPU, since boot. nullopt where the text holds no such line.
std::optional<double> parse_cpu_pressure(std::string_view text);

// The same, read from /proc/pressure/cpu; nullopt where the kernel does not expose it
// (older kernels, or PSI switched off with psi=0).
std::optional<double> cpu_waited_s();

// The part of `wall_s` during which some task waited for a CPU, from two readings of
// cpu_waited_s() around it; nullopt when either reading is missing or `wall_s` is not
// positive. At most 1.
std::optional<double> cpu_pressure(std::optional<double> before, std::optional<double> after, double wall_s);

}  // namespace maxcode

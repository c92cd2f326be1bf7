// Overloads and template specializations told apart by the profile: when a function
// has several definitions, the profile's entries of it (demangled names with their
// parameter types, and the definition's file and line from debug info) say which
// definition is the hot one, so the user need not set targets.signature.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runner/profile/profile.h"
#include "runner/workspace/locate.h"

namespace maxcode {

// The definition `entry` is, among `definitions` of its function: the one whose lines
// hold the entry's declaration line (debug info) or its hottest line, else the only one
// whose parameter types fit the entry's demangled parameters. nullopt when none or
// several fit.
std::optional<std::size_t> match_overload(const std::vector<Located>& definitions, const ProfileEntry& entry);

struct OverloadPick {
  std::size_t index = 0;   // into the definitions
  double share = 0;        // of its list's time (GPU for kernels, CPU for functions)
  std::string list;        // "GPU" | "CPU"
  std::string profiled;    // the profile's name of it, with parameter types
  std::string note;        // for people: which one was chosen, its share, the others'
};

// Which of `definitions` of `function` is hot: the profile's entries of the function
// mapped to definitions, the one with the largest share. nullopt when no entry maps to
// a definition (the function did not run, or its entries cannot be told apart).
std::optional<OverloadPick> pick_overload(const std::vector<Located>& definitions, const Profile& profile,
                                          const std::string& function);

}  // namespace maxcode

// Where the libraries loaded into profiled programs are: beside the maxcode
// executable (build/lib/ in a build tree, lib/maxcode/ when installed).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace maxcode {

struct InjectLibraries {
  std::filesystem::path sampler;  // libmaxcode_sampler.so; empty when not found
  std::filesystem::path cupti;    // libmaxcode_cupti.so; empty when not found (no CUPTI)
  std::filesystem::path shim;   // libmaxcode_shim.so (the call shim's runtime)
  std::vector<std::filesystem::path> searched;
};

// Looks in the directory set_inject_dir() gave (the CLI's MAXCODE_INJECT_DIR), then
// relative to /proc/self/exe: lib/, ., ../lib, ../lib/maxcode.
InjectLibraries find_inject_libraries();

// `library` copied into `work_dir`/inject (made if need be); the copy's path. A sandbox
// may give a run a private /tmp, where a build tree of maxcode itself may live, while
// the work directory is shown to it (read-only, so that a run cannot replace the
// library that watches it).
std::string copy_into_work_dir(const std::filesystem::path& library, const std::filesystem::path& work_dir);

// A directory to look in first; empty = none. The CLI sets it once, from the
// environment; the install layout is a fact of the process, so it is not passed per call.
void set_inject_dir(const std::filesystem::path& dir);

}  // namespace maxcode

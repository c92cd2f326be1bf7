// What `maxcode init` reads from a repository before it writes `.maxcode.json`: the
// build system (CMake, its presets), the tests (ctest, a tests/ folder), the benchmark
// programs and the framework each uses (Google Benchmark, nvbench, or a plain program),
// whether the code is CUDA, and where the library sources are.
//
// Only files are read; nothing is built or run here (runner/job/init_project.h does
// that). CMake files are read as text with a few patterns (add_executable, add_test,
// target_link_libraries): enough for the common layouts, and what was not understood is
// said in `notes` rather than guessed.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace maxcode {

// A program the repository builds that looks like a benchmark.
struct ScannedBenchmark {
  std::string name;                  // the CMake target (or file name of a built binary)
  std::string binary;                // relative path after the build ("build/bench/gemm_bench")
  std::vector<std::string> sources;  // relative paths, as far as the CMake file lists them
  std::string framework;             // "google-benchmark" | "nvbench" | "plain"
  bool cuda = false;                 // a .cu source, or it links CUDA code of the project
  bool reads_seed = false;           // a source mentions MAXCODE_SEED
  // CMake options, off by default, that it is built behind (`if(BASE64_BUILD_TESTS)`
  // around its add_subdirectory or add_executable): the configure step turns them on.
  std::vector<std::string> cmake_options;
  std::string make_target;           // the Makefile rule that builds it (no CMake)
  // Meson options, off by default, that it is built behind, as the flags that turn them
  // on ("-Dbenchmarks=true"): the configure step adds them.
  std::vector<std::string> meson_options;
  std::string why;                   // how it was recognised, for the config's comments
};

struct ProjectScan {
  std::filesystem::path root;
  bool cmake = false;                // CMakeLists.txt at the top
  std::string preset;                // first usable configure preset of CMakePresets.json
  std::string build_preset;          // a build preset for it, if any
  std::string test_preset;           // a test preset for it, if any
  std::string binary_dir = "build";  // where the build goes, relative to the root
  bool makefile = false;             // a Makefile at the top (no CMake, no Meson)
  bool meson = false;                // meson.build at the top (no CMake)
  bool meson_tests = false;          // some test() call runs an executable of the build
  // Without CMake, Meson or a Makefile: a build system init does not read ("Bazel",
  // "Autotools", ...) and the file at the top that shows it ("MODULE.bazel"), for the
  // message that says so; "" when none.
  std::string unread_build_system;
  std::string unread_build_file;
  std::string make_test_target;      // its `test` or `check` rule, if any
  bool ctest = false;                // enable_testing()/include(CTest) and some add_test
  std::vector<std::string> test_dirs;  // top-level "tests", "test"
  bool cuda = false;                 // CUDA sources or the CUDA language enabled
  bool knobs = false;                // a `// maxcode: tune` comment in some source (runner/workspace/knobs.h)
  std::vector<ScannedBenchmark> benchmarks;
  std::vector<std::string> source_dirs;  // top-level folders of library code ("src", "include")
  // Benchmark sources inside those folders (a benchmark beside the library's code in
  // src/): out of scope one by one, the folder staying in.
  std::vector<std::string> benchmark_sources_in_scope;
  std::vector<std::string> notes;        // what was seen but not understood
  bool has_config = false;           // .maxcode.json exists already
};

// Reads `root`. Throws std::runtime_error when it is not a readable directory.
ProjectScan scan_project(const std::filesystem::path& root);

// What scan_project looks for, in words, for the message when it finds no benchmark.
std::vector<std::string> scan_looked_for();

}  // namespace maxcode

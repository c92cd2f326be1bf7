#include "runner/workspace/project_scan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "support/test_support.h"

namespace maxcode {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::write_file;

TEST(ProjectScan, FindsAGoogleBenchmarkProgramAndCtestInTheFixture) {
  TempDir dir;
  fs::copy(testing::source_path("tests/fixtures/gbench-prefix"), dir.path(), fs::copy_options::recursive);
  ProjectScan scan = scan_project(dir.path());
  EXPECT_TRUE(scan.cmake);
  EXPECT_TRUE(scan.ctest);
  EXPECT_FALSE(scan.cuda);
  EXPECT_EQ(scan.test_dirs, std::vector<std::string>{"tests"});
  // replay/ holds candidates, bench/ and tests/ are not the library.
  EXPECT_EQ(scan.source_dirs, std::vector<std::string>{"src"});
  ASSERT_EQ(scan.benchmarks.size(), 1u) << "the test program is not a benchmark";
  const ScannedBenchmark& b = scan.benchmarks[0];
  EXPECT_EQ(b.name, "prefix_bench");
  EXPECT_EQ(b.binary, "build/prefix_bench");
  EXPECT_EQ(b.framework, "google-benchmark");
  EXPECT_EQ(b.sources, std::vector<std::string>{"bench/prefix_bench.cc"});
  EXPECT_NE(b.why.find("CMakeLists.txt"), std::string::npos);
  EXPECT_FALSE(scan.has_config);
}

// A benchmark in a subdirectory's CMakeLists.txt lands in the same subdirectory of the
// build; a Google Benchmark program is recognised by its include even when it links
// through a variable; comments are not read as commands.
TEST(ProjectScan, SubdirectoriesIncludesAndComments) {
  TempDir dir;
  write_file(dir / "CMakeLists.txt", "project(p CXX)\n# add_executable(commented_bench x.cc)\n"
                                     "add_subdirectory(perf)\nenable_testing()\nadd_test(NAME t COMMAND unit)\n"
                                     "add_executable(unit tests/unit.cc)\n");
  write_file(dir / "perf/CMakeLists.txt", "add_executable(kernels_perf\n  ${CMAKE_CURRENT_SOURCE_DIR}/main.cc)\n"
                                          "target_link_libraries(kernels_perf PRIVATE ${BENCH_LIBS})\n");
  write_file(dir / "perf/main.cc", "#include <benchmark/benchmark.h>\nBENCHMARK_MAIN();\n");
  write_file(dir / "tests/unit.cc", "int main() {}\n");
  write_file(dir / "lib/a.cc", "int f() { return 1; }\n");
  ProjectScan scan = scan_project(dir.path());
  EXPECT_TRUE(scan.ctest);
  ASSERT_EQ(scan.benchmarks.size(), 1u);
  EXPECT_EQ(scan.benchmarks[0].name, "kernels_perf");
  EXPECT_EQ(scan.benchmarks[0].binary, "build/perf/kernels_perf");
  EXPECT_EQ(scan.benchmarks[0].framework, "google-benchmark");
  EXPECT_EQ(scan.source_dirs, std::vector<std::string>{"lib"}) << "perf/ holds the benchmark";
}

// Issue 24: a time-zone library keeps its benchmark in src/ beside its code, and init
// dropped src/ from the scope whole. The folder stays; the benchmark's file is left out.
TEST(ProjectScan, ABenchmarkBesideTheLibrarysCodeLeavesTheFolderInScope) {
  TempDir dir;
  write_file(dir / "CMakeLists.txt", "project(tz CXX)\nadd_library(tz src/time_zone.cc)\n"
                                     "add_executable(time_zone_benchmark src/time_zone_benchmark.cc)\n"
                                     "target_link_libraries(time_zone_benchmark tz benchmark::benchmark)\n");
  write_file(dir / "src/time_zone.cc", "int tz() { return 1; }\n");
  write_file(dir / "src/time_zone_benchmark.cc", "#include <benchmark/benchmark.h>\nBENCHMARK_MAIN();\n");
  ProjectScan scan = scan_project(dir.path());
  ASSERT_EQ(scan.benchmarks.size(), 1u);
  EXPECT_EQ(scan.source_dirs, std::vector<std::string>{"src"});
  EXPECT_EQ(scan.benchmark_sources_in_scope, std::vector<std::string>{"src/time_zone_benchmark.cc"});
}

TEST(ProjectScan, PresetsPlaceTheBuildAndNameTheCommands) {
  TempDir dir;
  write_file(dir / "CMakeLists.txt", "project(p CXX CUDA)\nset(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)\n"
                                     "add_executable(bench_gemm bench/gemm.cu)\n");
  write_file(dir / "bench/gemm.cu", "int main() { const char* s = getenv(\"MAXCODE_SEED\"); }\n");
  write_file(dir / "CMakePresets.json", R"({"version": 3,
    "configurePresets": [{"name": "base", "hidden": true},
                         {"name": "release", "inherits": "base", "binaryDir": "${sourceDir}/build/${presetName}"}],
    "buildPresets": [{"name": "release-build", "configurePreset": "release"}]})");
  ProjectScan scan = scan_project(dir.path());
  EXPECT_EQ(scan.preset, "release");
  EXPECT_EQ(scan.build_preset, "release-build");
  EXPECT_EQ(scan.test_preset, "");
  EXPECT_EQ(scan.binary_dir, "build/release");
  EXPECT_TRUE(scan.cuda);
  EXPECT_FALSE(scan.ctest);
  ASSERT_EQ(scan.benchmarks.size(), 1u);
  EXPECT_EQ(scan.benchmarks[0].binary, "build/release/bin/bench_gemm");
  EXPECT_EQ(scan.benchmarks[0].framework, "plain");
  EXPECT_TRUE(scan.benchmarks[0].cuda);
  EXPECT_TRUE(scan.benchmarks[0].reads_seed);
}

// A CMakePresets.json nested a million deep (issue 22, point 9): not used, with a note;
// reading it copied the nesting recursively and overflowed the stack.
TEST(ProjectScan, DeepPresetsAreNotUsedAndDoNotCrash) {
  TempDir dir;
  write_file(dir / "CMakeLists.txt", "project(p CXX)\nadd_executable(bench bench.cc)\n");
  write_file(dir / "CMakePresets.json",
             R"({"version": 3, "configurePresets": )" + std::string(1'000'000, '[') + std::string(1'000'000, ']') + "}");
  ProjectScan scan = scan_project(dir.path());
  EXPECT_EQ(scan.preset, "");
  EXPECT_NE(std::find(scan.notes.begin(), scan.notes.end(),
                      "CMakePresets.json is not JSON maxcode can read: presets not used"),
            scan.notes.end());
}

TEST(ProjectScan, ARepositoryWithoutABenchmarkSaysWhatWasSeen) {
  TempDir dir;
  write_file(dir / "CMakeLists.txt", "project(p CXX)\nadd_library(p src/p.cc)\nadd_executable(tool src/main.cc)\n"
                                     "add_test(NAME t COMMAND tool)\n");
  write_file(dir / "src/p.cc", "int p() { return 0; }\n");
  write_file(dir / ".maxcode.json", "{}");
  ProjectScan scan = scan_project(dir.path());
  EXPECT_TRUE(scan.benchmarks.empty());
  EXPECT_TRUE(scan.has_config);
  EXPECT_FALSE(scan.ctest);
  ASSERT_EQ(scan.notes.size(), 1u);
  EXPECT_NE(scan.notes[0].find("add_test without enable_testing()"), std::string::npos);
  EXPECT_FALSE(scan_looked_for().empty());
}

TEST(ProjectScan, WithoutCMakeABuiltBenchmarkBinaryIsFound) {
  TempDir dir;
  write_file(dir / "Makefile", "all:\n\tcc -o bench_x x.c\n");
  write_file(dir / "bench_x", "\x7f" "ELF...");
  fs::permissions(dir / "bench_x", fs::perms::owner_all);
  write_file(dir / "bench_x.c", "int main() {}\n");
  ProjectScan scan = scan_project(dir.path());
  EXPECT_TRUE(scan.makefile);
  ASSERT_EQ(scan.benchmarks.size(), 1u);
  EXPECT_EQ(scan.benchmarks[0].binary, "bench_x");
  EXPECT_THROW(scan_project(dir / "absent"), std::runtime_error);
}

}  // namespace
}  // namespace maxcode

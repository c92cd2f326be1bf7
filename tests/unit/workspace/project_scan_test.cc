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

// Issue 24: a base64 codec's benchmark is added by the project's own CMake function in
// test/, which is built only behind `option(BASE64_BUILD_TESTS ... OFF)`; init found
// nothing. Both are read now: the function's calls add executables, and the option the
// folder sits behind is named, so that the configure step can turn it on. An option on
// by default, or a condition that is no option, names nothing.
TEST(ProjectScan, ABenchmarkBehindAnOptionAndAddedByTheProjectsFunctionIsFound) {
  TempDir dir;
  write_file(dir / "CMakeLists.txt",
             "project(base64 C)\noption(BASE64_BUILD_TESTS \"add test projects\" OFF)\n"
             "option(BASE64_WITH_AVX2 \"AVX2 codec\" ON)\nadd_library(base64 lib/lib.c)\n"
             "if(BASE64_BUILD_TESTS)\n  enable_testing()\n  add_subdirectory(test)\nendif()\n"
             "if(BASE64_WITH_AVX2)\n  add_executable(avx2_bench bench/avx2.c)\nendif()\n");
  write_file(dir / "test/CMakeLists.txt",
             "function(add_base64_test TEST_NAME)\n  unset(SRC_FILES)\n  foreach(SRC_FILE ${ARGN})\n"
             "    list(APPEND SRC_FILES \"${SRC_FILE}\")\n  endforeach()\n"
             "  add_executable(${TEST_NAME} ${SRC_FILES})\n  target_link_libraries(${TEST_NAME} PRIVATE base64)\n"
             "endfunction()\n"
             "add_base64_test(test_base64 test_base64.c codec_supported.c)\nadd_test(NAME test_base64 COMMAND test_base64)\n"
             "if(${CMAKE_SYSTEM_NAME} STREQUAL \"Linux\")\n  add_base64_test(benchmark benchmark.c codec_supported.c)\nendif()\n");
  write_file(dir / "test/benchmark.c", "int main(void) { return 0; }\n");
  write_file(dir / "test/test_base64.c", "int main(void) { return 0; }\n");
  write_file(dir / "bench/avx2.c", "int main(void) { return 0; }\n");
  write_file(dir / "lib/lib.c", "int f(void) { return 1; }\n");
  ProjectScan scan = scan_project(dir.path());
  ASSERT_EQ(scan.benchmarks.size(), 2u);
  const ScannedBenchmark& avx2 = scan.benchmarks[0].name == "avx2_bench" ? scan.benchmarks[0] : scan.benchmarks[1];
  const ScannedBenchmark& bench = scan.benchmarks[0].name == "benchmark" ? scan.benchmarks[0] : scan.benchmarks[1];
  EXPECT_EQ(bench.name, "benchmark");
  EXPECT_EQ(bench.binary, "build/test/benchmark");
  EXPECT_EQ(bench.sources, (std::vector<std::string>{"test/benchmark.c", "test/codec_supported.c"}));
  EXPECT_EQ(bench.cmake_options, std::vector<std::string>{"BASE64_BUILD_TESTS"});
  EXPECT_NE(bench.why.find("add_base64_test(benchmark) in test/CMakeLists.txt, built only with BASE64_BUILD_TESTS=ON"),
            std::string::npos)
      << bench.why;
  EXPECT_TRUE(avx2.cmake_options.empty()) << "BASE64_WITH_AVX2 is on by default";
  // The function's template is not an executable of its own.
  for (const ScannedBenchmark& b : scan.benchmarks) EXPECT_EQ(b.name.find("${"), std::string::npos) << b.name;
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

namespace maxcode {
namespace {

// Issue 24: a Makefile project (no CMake) whose benchmark is a rule of its own, out of
// the default goal; `make check` runs its tests. Phony rules, pattern rules, objects and
// assignments with colons are not benchmarks.
TEST(ProjectScan, AMakefilesBenchmarkRuleAndTestRuleAreFound) {
  testing::TempDir dir;
  testing::write_file(dir / "Makefile",
                      "CFLAGS := -O2\nURL = http://example.com:80/x\n.PHONY: all check bench-run\n"
                      "all: libdiv.a\nlibdiv.a: div.o\n\tar rcs $@ $^\n%.o: %.c\n\t$(CC) -c $<\n"
                      "bench/div_bench: bench/div_bench.c \\\n  libdiv.a\n\t$(CC) -o $@ $^\n"
                      "bench-run: bench/div_bench\n\t./bench/div_bench\n"
                      "check: tests/t\n\t./tests/t\n");
  testing::write_file(dir / "div.c", "int divide(int a, int b) { return a / b; }\n");
  testing::write_file(dir / "bench/div_bench.c", "int main(void) { return 0; }\n");
  ProjectScan scan = scan_project(dir.path());
  EXPECT_TRUE(scan.makefile);
  EXPECT_EQ(scan.make_test_target, "check");
  ASSERT_EQ(scan.benchmarks.size(), 1u);
  EXPECT_EQ(scan.benchmarks[0].binary, "bench/div_bench");
  EXPECT_EQ(scan.benchmarks[0].make_target, "bench/div_bench");
  EXPECT_EQ(scan.benchmarks[0].sources, std::vector<std::string>{"bench/div_bench.c"});
  EXPECT_EQ(scan.benchmarks[0].why, "the Makefile's rule for bench/div_bench");
}

// A Meson build: subdir()s entered, sources from literals, arrays, files() and variables
// holding them; an executable that benchmark() runs is a benchmark whatever its name, one
// named like a benchmark is too unless test() runs it; comments and strings are not read
// as calls; a name that is not a literal is said, not guessed.
TEST(ProjectScan, AMesonBuildsBenchmarksAndTestsAreFound) {
  testing::TempDir dir;
  testing::write_file(dir / "meson.build",
                      "project('p', 'cpp')  # executable('in_a_comment_bench', 'x.cc')\n"
                      "message('executable(\\'in_a_string_bench\\', \\'y.cc\\')')\n"
                      "subdir('src')\nif get_option('perf') and not meson.is_cross_build()\n  subdir('perf')\nendif\n"
                      "subdir('tests')\n"
                      "if get_option('extra')\n  executable(name_var, 'z.cc')\nendif\n");
  testing::write_file(dir / "src/meson.build", "lib = static_library('p', files('p.cc', 'q.cc'))\n");
  testing::write_file(dir / "perf/meson.build",
                      "timing_srcs = ['timing.cc', 'data.cc']\n"
                      "runner = executable('timing', timing_srcs, link_with: lib)\n"
                      "benchmark('timing', runner, args: ['--n', '10'])\n"
                      "executable('micro_bench',\n  files('micro.cc'),\n  link_with: lib)\n");
  testing::write_file(dir / "tests/meson.build",
                      "t = executable('bench_format_test', 'bench_format_test.cc')\ntest('format', t)\n");
  testing::write_file(
      dir / "meson_options.txt",
      "option('perf', type : 'boolean', value : false)\noption('docs', type: 'feature', value: 'disabled')\n");
  testing::write_file(dir / "src/p.cc", "int p() { return 1; }\n");
  testing::write_file(dir / "perf/timing.cc", "int main() { return 0; }  // MAXCODE_SEED\n");
  testing::write_file(dir / "perf/micro.cc", "#include <benchmark/benchmark.h>\nBENCHMARK_MAIN();\n");
  testing::write_file(dir / "Makefile", "all:\n\tmeson compile -C build\n");
  ProjectScan scan = scan_project(dir.path());
  EXPECT_TRUE(scan.meson);
  EXPECT_FALSE(scan.makefile) << "a Makefile beside meson.build is a wrapper; Meson is read";
  EXPECT_TRUE(scan.meson_tests);
  ASSERT_EQ(scan.benchmarks.size(), 2u);
  const ScannedBenchmark& timing = scan.benchmarks[0];
  EXPECT_EQ(timing.name, "timing");
  EXPECT_EQ(timing.binary, "build/perf/timing");
  EXPECT_EQ(timing.sources, (std::vector<std::string>{"perf/timing.cc", "perf/data.cc"}));
  EXPECT_TRUE(timing.reads_seed);
  EXPECT_EQ(timing.why, "benchmark() runs executable('timing') in perf/meson.build");
  // Built only behind an option off by default, around the subdir() that enters perf/.
  EXPECT_EQ(timing.meson_options, std::vector<std::string>{"-Dperf=true"});
  const ScannedBenchmark& micro = scan.benchmarks[1];
  EXPECT_EQ(micro.binary, "build/perf/micro_bench");
  EXPECT_EQ(micro.framework, "google-benchmark");
  EXPECT_EQ(micro.why, "executable('micro_bench') in perf/meson.build, named like a benchmark");
  ASSERT_EQ(scan.notes.size(), 1u);
  EXPECT_EQ(scan.notes[0], "meson.build: an executable() whose name is not a string literal was left out");
  EXPECT_EQ(scan.source_dirs, std::vector<std::string>{"src"});
}

}  // namespace
}  // namespace maxcode

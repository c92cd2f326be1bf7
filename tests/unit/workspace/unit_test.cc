#include "runner/workspace/unit.h"

#include <gtest/gtest.h>

#include <string>

#include "support/test_support.h"

namespace maxcode {
namespace {

// A CUDA file as users write them: a launcher, the kernel it launches, the device
// functions the kernel calls, a static host helper, and functions outside the unit.
const std::string kCuda =
    "#include \"k.h\"\n"                                                   // 1
    "\n"                                                                   // 2
    "__device__ float square(float x) { return x * x; }\n"                 // 3
    "\n"                                                                   // 4
    "template <typename T>\n"                                              // 5
    "__device__ T load(const T* p, int i) { return p[i]; }\n"              // 6
    "\n"                                                                   // 7
    "__device__ float unused_device(float x) { return -x; }\n"             // 8
    "\n"                                                                   // 9
    "__global__ void norm_kernel(const float* in, float* out, int n) {\n"  // 10
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"                   // 11
    "  if (i < n) out[i] = square(load<float>(in, i));\n"                  // 12
    "}\n"                                                                  // 13
    "\n"                                                                   // 14
    "static int blocks_for(int n) { return (n + 255) / 256; }\n"           // 15
    "\n"                                                                   // 16
    "struct Grid {\n"                                                      // 17
    "  int size() const { return 1; }\n"                                   // 18
    "};\n"                                                                 // 19
    "\n"                                                                   // 20
    "void norm(const float* in, float* out, int n, cudaStream_t s) {\n"    // 21
    "  Grid g;\n"                                                          // 22
    "  norm_kernel<<<blocks_for(n) * g.size(), 256, 0, s>>>(in, out, n);\n"  // 23
    "}\n"                                                                  // 24
    "\n"                                                                   // 25
    "void run_all(const float* in, float* out, int n) {\n"                 // 26
    "  norm(in, out, n, 0);\n"                                             // 27
    "}\n";                                                                 // 28

Unit unit_of(const std::string& text, const std::string& target, const UnitConfig& config = {}) {
  return find_unit(text, "src/k.cu", find_definition(text, target, "src/k.cu"), config);
}

std::vector<std::string> whys(const Unit& unit) {
  std::vector<std::string> out;
  for (const UnitFunction& f : unit.functions) out.push_back(f.name + ": " + f.why);
  return out;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const SourceError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Unit, LauncherKernelDeviceFunctionsAndHelpersInFileOrder) {
  const Unit unit = unit_of(kCuda, "norm");
  EXPECT_EQ(unit.names(), (std::vector<std::string>{"norm", "square", "load", "norm_kernel", "blocks_for"}));
  EXPECT_EQ(whys(unit), (std::vector<std::string>{"norm: the target", "square: called by norm_kernel",
                                                  "load: called by norm_kernel", "norm_kernel: launched by norm",
                                                  "blocks_for: called by norm"}));
  EXPECT_EQ(unit.functions[3].extent.line_begin, 10u);
  EXPECT_TRUE(unit.notes.empty()) << unit.notes.front();
  // The member Grid::size stays with its class; run_all calls the target, not the other way.
  const std::vector<std::string> names = unit.names();
  for (const std::string& outside : {"size", "run_all", "unused_device"})
    EXPECT_EQ(std::count(names.begin(), names.end(), outside), 0) << outside;
}

TEST(Unit, AKernelAloneIsAUnitOfItsCallees) {
  EXPECT_EQ(unit_of(kCuda, "norm_kernel").names(), (std::vector<std::string>{"norm_kernel", "square", "load"}));
  EXPECT_EQ(unit_of(kCuda, "square").names(), std::vector<std::string>{"square"});
}

TEST(Unit, AddAndLeaveOut) {
  UnitConfig config;
  config.add = {"unused_device"};
  config.leave_out = {"load"};
  const Unit unit = unit_of(kCuda, "norm", config);
  EXPECT_EQ(unit.names(),
            (std::vector<std::string>{"norm", "square", "unused_device", "norm_kernel", "blocks_for"}));
  EXPECT_EQ(unit.functions[2].why, "targets.unit.add");
  ASSERT_EQ(unit.notes.size(), 1u);
  EXPECT_EQ(unit.notes[0], "load (called by norm_kernel) is left out of the unit by targets.unit.leave_out");

  // Leaving out the kernel leaves out what only it reaches.
  config = {};
  config.leave_out = {"norm_kernel"};
  EXPECT_EQ(unit_of(kCuda, "norm", config).names(), (std::vector<std::string>{"norm", "blocks_for"}));
}

TEST(Unit, ListedNamesMustBeFunctionsOfTheFile) {
  UnitConfig config;
  config.leave_out = {"norm"};
  EXPECT_EQ(error_of([&] { unit_of(kCuda, "norm", config); }),
            "targets.unit.leave_out: 'norm' is the target itself, which is always in its unit");
  config.leave_out = {"size"};  // a member defined in its class is no function of the unit's kind
  EXPECT_EQ(error_of([&] { unit_of(kCuda, "norm", config); }),
            "targets.unit.leave_out: 'size' is not a function of src/k.cu");
  config = {};
  config.add = {"nowhere"};
  EXPECT_EQ(error_of([&] { unit_of(kCuda, "norm", config); }),
            "targets.unit.add: 'nowhere' is not a function of src/k.cu (a unit stays within its target's file)");
}

TEST(Unit, CallsThroughPointersAreNotedAndFunctionsPassedAsPointersJoin) {
  const std::string text =
      "static bool less_than(int a, int b) { return a < b; }\n"               // 1
      "static int twice(int x) { return 2 * x; }\n"                           // 2
      "static int thrice(int x) { return 3 * x; }\n"                          // 3
      "void sort_and_map(int* v, int n, int (*f)(int)) {\n"                   // 4
      "  std::sort(v, v + n, less_than);\n"                                   // 5
      "  int (*g)(int) = n > 3 ? twice : thrice;\n"                           // 6
      "  for (int i = 0; i < n; ++i) v[i] = f(v[i]) + (*g)(v[i]);\n"          // 7
      "}\n";
  const Unit unit = unit_of(text, "sort_and_map");
  EXPECT_EQ(unit.names(), (std::vector<std::string>{"sort_and_map", "less_than"}));
  EXPECT_EQ(unit.functions[1].why, "passed as a pointer by sort_and_map");
  ASSERT_EQ(unit.notes.size(), 3u) << ::testing::PrintToString(unit.notes);
  EXPECT_EQ(unit.notes[0],
            "src/k.cu:5: sort_and_map passes less_than as a pointer; maxcode put less_than into the unit "
            "(targets.unit.leave_out keeps it out)");
  EXPECT_EQ(unit.notes[1],
            "src/k.cu:7: sort_and_map calls through a pointer (f); maxcode cannot tell which function that "
            "reaches, so none joins the unit: name one of this file in targets.unit.add to let candidates "
            "change it");
  EXPECT_NE(unit.notes[2].find("src/k.cu:7: sort_and_map calls through a pointer (g)"), std::string::npos);

  UnitConfig config;
  config.add = {"twice", "thrice"};
  EXPECT_EQ(unit_of(text, "sort_and_map", config).names(),
            (std::vector<std::string>{"sort_and_map", "less_than", "twice", "thrice"}));
}

TEST(Unit, RecursionOverloadsAndMembersOfObjects) {
  const std::string text =
      "int step(int x) { return x + 1; }\n"
      "double step(double x) { return x + 0.5; }\n"
      "int walk(int n, Obj& o) {\n"
      "  o.helper();\n"
      "  return n == 0 ? 0 : walk(n - 1, o) + static_cast<int>(step(1.0));\n"
      "}\n"
      "void helper() {}\n";
  // Both overloads of a called name join: which one a call picks needs the types.
  EXPECT_EQ(unit_of(text, "walk").names(), (std::vector<std::string>{"walk", "step", "step"}));
}

TEST(Unit, CalleesInOtherFilesAreNotedAndListedNamesThereAreErrors) {
  testing::TempDir dir;
  testing::write_file(dir / "src/a.cc",
                      "#include \"b.h\"\n"
                      "static int local(int x) { return x; }\n"
                      "int target(int x) {\n"
                      "  return local(x) + shared_helper(x) + printf(\"\");\n"
                      "}\n");
  testing::write_file(dir / "src/b.h", "int shared_helper(int x);\n");
  testing::write_file(dir / "src/b.cc", "#include \"b.h\"\n\nint shared_helper(int x) { return x * 2; }\n");
  testing::write_file(dir / "third_party/c.cc", "int printf(const char*) { return 0; }\n");
  const ScopeConfig scope{{"src/**"}, {}};
  const Located located = locate_target(dir.path(), scope, "target");
  const Unit unit = find_unit(dir.path(), scope, located, {});
  EXPECT_EQ(unit.names(), (std::vector<std::string>{"target", "local"}));
  ASSERT_EQ(unit.elsewhere.size(), 1u) << "only files in scope are looked at";
  EXPECT_EQ(unit.elsewhere[0].name, "shared_helper");
  EXPECT_EQ(unit.elsewhere[0].where, "src/b.cc:3");
  ASSERT_EQ(unit.notes.size(), 1u);
  EXPECT_EQ(unit.notes[0],
            "shared_helper (called by target at src/a.cc:4) is defined in src/b.cc:3, another file: a unit "
            "stays within src/a.cc, so candidates may not change it (move it into src/a.cc to make it part "
            "of the unit)");

  UnitConfig config;
  config.add = {"shared_helper"};
  EXPECT_EQ(error_of([&] { find_unit(dir.path(), scope, located, config); }),
            "targets.unit.add: 'shared_helper' is defined in src/b.cc:3, not in src/a.cc: a unit stays "
            "within its target's file and may not span files (move 'shared_helper' into src/a.cc, or "
            "optimize it as a target of its own)");
  config.add = {"no_such_fn"};
  EXPECT_EQ(error_of([&] { find_unit(dir.path(), scope, located, config); }),
            "targets.unit.add: 'no_such_fn' is not a function of src/a.cc or of any other source file in scope");
}

TEST(Unit, TextShowsTheDefinitionsInFileOrder) {
  const Unit unit = unit_of(kCuda, "norm_kernel");
  EXPECT_EQ(unit_text(kCuda, unit),
            "__device__ float square(float x) { return x * x; }\n\n"
            "template <typename T>\n__device__ T load(const T* p, int i) { return p[i]; }\n\n"
            "__global__ void norm_kernel(const float* in, float* out, int n) {\n"
            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "  if (i < n) out[i] = square(load<float>(in, i));\n}");
}

}  // namespace
}  // namespace maxcode

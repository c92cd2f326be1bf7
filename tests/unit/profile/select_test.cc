// Target selection from a profile, end to end on CPU: a function with two overloads
// (tests/fixtures/profile/overload-repo), where the profile — not targets.signature —
// says which one is hot; and the messages for kernels that have no one launcher in
// their file. The GPU side (a kernel through its launcher) is in profile_gpu_test, on
// recorded CUPTI files.
#include "runner/profile/select.h"

#include <gtest/gtest.h>

#include "runner/profile/collect.h"
#include "runner/profile/launchers.h"
#include "runner/util/files.h"
#include "runner/util/process.h"
#include "runner/workspace/locate.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

namespace fs = std::filesystem;
using testing::source_path;
using testing::TempDir;

class OverloadRepo : public ::testing::Test {
 protected:
  void SetUp() override {
    repo_ = dir_.path() / "repo";
    fs::copy(source_path("tests/fixtures/profile/overload-repo"), repo_, fs::copy_options::recursive);
    config_ = load_config(repo_ / ".maxcode.json");
  }
  TempDir dir_;
  fs::path repo_;
  Config config_;
};

TEST_F(OverloadRepo, TheProfilesHotOverloadIsChosen) {
  ASSERT_EQ(locate_definitions(repo_, config_.scope, "scale").size(), 2u);
  const std::string signature = signature_from_profile(repo_, repo_ / ".maxcode.json", config_, "scale", true);
  EXPECT_EQ(signature, "double scale(double* v, long n)");
  // The signature locates exactly that definition.
  const Located located = locate_target(repo_, config_.scope, "scale", signature);
  EXPECT_EQ(located.target.line_begin, 13u);

  // With no function named, the same choice comes out of the profile's top entry.
  config_.targets.functions.clear();
  const TargetChoice choice = choose_target_by_profile(repo_, repo_ / ".maxcode.json", config_, true);
  EXPECT_EQ(choice.function, "scale");
  EXPECT_EQ(choice.signature, "double scale(double* v, long n)");
  EXPECT_EQ(choice.line, 13);
  EXPECT_NE(choice.note.find("of CPU time; of its 2 definitions, the profile's scale(double*, long) is this one"),
            std::string::npos)
      << choice.note;
}

TEST_F(OverloadRepo, OneDefinitionNeedsNoProfile) {
  write_text(repo_ / "src/scale.cpp", "double scale(double* v, long n) { return v[0] * n; }\n");
  write_text(repo_ / ".maxcode.json", "{ not json");  // never read: nothing to resolve
  EXPECT_EQ(signature_from_profile(repo_, repo_ / ".maxcode.json", config_, "scale", true), "");
}

TEST_F(OverloadRepo, WhenTheProfileCannotTellTheUserIsAskedForASignature) {
  // The benchmark never calls scale: no entry of it to decide by.
  write_text(repo_ / "bench/main.cpp",
             "#include <cstdio>\nint main() {\n  volatile double s = 0;\n"
             "  for (long i = 0; i < 50000000; ++i) s = s + 1.0;\n  std::printf(\"%.1f\\n\", s);\n}\n");
  EXPECT_EQ(signature_from_profile(repo_, repo_ / ".maxcode.json", config_, "scale", true), "");
  try {
    locate_target(repo_, config_.scope, "scale");
    ADD_FAILURE() << "no error";
  } catch (const SourceError& e) {
    EXPECT_NE(std::string(e.what()).find("name one with targets.signature"), std::string::npos) << e.what();
  }
}

TEST_F(OverloadRepo, EvalResolvesTheOverloadFromTheProfile) {
  // The candidate rewrites the double overload; had the float one been chosen, it
  // would not even be the same function.
  const std::string original = read_text(repo_ / "src/scale.cpp");
  write_text(dir_ / "same.cpp", original.substr(original.find("double scale(double* v, long n) {")));
  Command c;
  c.shell = std::string(MAXCODE_BINARY) + " eval " + repo_.string() + " --function scale --candidate " + (dir_ / "same.cpp").string() +
            " --out " + (dir_ / "out").string();
  c.timeout_s = 300;
  const Outcome o = run(c);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.err.find("scale has 2 definitions; the profile says src/scale.cpp:13 is hot: scale(double*, long)"),
            std::string::npos)
      << o.err;
  const auto result = nlohmann::json::parse(read_text(dir_ / "out/result.json"));
  EXPECT_EQ(result["target"]["signature"], "double scale(double* v, long n)");
  ASSERT_EQ(result["candidates"].size(), 1u);
  EXPECT_EQ(result["candidates"][0]["verdict"], "not-faster") << result["candidates"][0]["reason"];
}

// A kernel whose target cannot be its launcher: each case says what maxcode saw and
// what to set.
TEST(ResolveTarget, KernelsWithoutOneLauncherInTheirFileGetClearMessages) {
  TempDir repo;
  write_text(repo / "src/k.cu", R"(
__global__ void by_pointer(float* p) { p[0] = 1; }
__global__ void elsewhere(float* p) { p[0] = 2; }
__global__ void never(float* p) { p[0] = 3; }
static void (*table[])(float*) = {by_pointer};
void run_table(float* p, int i) { table[i]<<<1, 1>>>(p); }
)");
  write_text(repo / "src/main.cu", "void drive(float* p) { elsewhere<<<1, 1>>>(p); }\n");
  Collected none;
  Profile profile = rank_profile(none, CodeOrigin({repo.path()}, ScopeConfig{}));
  for (const std::string name : {"by_pointer", "elsewhere", "never"}) {
    ProfileEntry e;
    e.kind = "gpu";
    e.name = name + "(float*)";
    e.function = name;
    e.file = "src/k.cu";
    e.in_scope = true;
    e.share = 0.5;
    profile.kernels.push_back(e);
  }
  SourceIndex sources(repo.path());
  find_launchers(profile.kernels, sources);
  auto message = [&](std::size_t i) {
    try {
      resolve_target(repo.path(), ScopeConfig{}, profile.kernels[i]);
    } catch (const SourceError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(message(0),
            "kernel by_pointer (src/k.cu, 50.0% of GPU time) has no launcher maxcode can read: launched only through "
            "a pointer: its name is used as a value at src/k.cu:5, never launched by name; name the host function to "
            "optimize with targets.functions (or --function)");
  EXPECT_EQ(message(1),
            "kernel elsewhere (src/k.cu, 50.0% of GPU time) is launched by drive in another file (src/main.cu:1), "
            "and a target unit stays in one file; move the launcher next to the kernel, or name a function of one "
            "file with targets.functions (or --function)");
  EXPECT_NE(message(2).find("no launch of it found in the sources (no never<<<...>>> or cudaLaunchKernel(never, ...))"),
            std::string::npos)
      << message(2);
}


// Copies of the launcher outside the scope (a replay/ folder of candidates beside src/,
// as examples/cuda-ops has) leave one launcher in scope: it is the target.
TEST(ResolveTarget, LaunchersOutsideTheScopeAreLeftAside) {
  TempDir repo;
  const std::string source = "__global__ void k(float* p) { p[0] = 1; }\nvoid launch(float* p) { k<<<1, 1>>>(p); }\n";
  write_text(repo / "src/k.cu", source);
  write_text(repo / "replay/01-faster.cu", source);
  write_text(repo / "replay/02-other.cu", source);
  Collected none;
  ScopeConfig scope;
  scope.include = {"src/**"};
  Profile profile = rank_profile(none, CodeOrigin({repo.path()}, scope));
  ProfileEntry e;
  e.kind = "gpu";
  e.name = "k(float*)";
  e.function = "k";
  e.file = "src/k.cu";
  e.in_scope = true;
  e.share = 0.9;
  profile.kernels.push_back(e);
  SourceIndex sources(repo.path());
  find_launchers(profile.kernels, sources);
  ASSERT_EQ(profile.kernels[0].launchers.size(), 3u);
  const TargetChoice choice = resolve_target(repo.path(), scope, profile.kernels[0]);
  EXPECT_EQ(choice.function, "launch");
  EXPECT_EQ(choice.file, "src/k.cu");
  EXPECT_NE(choice.note.find("2 more launcher(s) outside the scope left aside"), std::string::npos) << choice.note;
  // With everything in scope, the three are a real choice the user must make.
  EXPECT_THROW(resolve_target(repo.path(), ScopeConfig{}, profile.kernels[0]), SourceError);
}

}  // namespace
}  // namespace maxcode

namespace maxcode {
namespace {

// Per-architecture copies of one `static inline` helper (a real popcount library's
// layout): same name, same signature, two files. The profile's symbol names the file,
// and that decides; the file travels with the choice so that locating it again agrees.
TEST(ResolveTarget, TheProfilesFileDecidesBetweenCopiesOfOneNameInSeveralFiles) {
  testing::TempDir repo;
  const std::string helper =
      "#include <stdint.h>\nstatic inline int popcount64(uint64_t x) {\n  int n = 0;\n"
      "  while (x) { x &= x - 1; ++n; }\n  return n;\n}\n";
  write_text(repo / "src/x86/popcnt.h", helper);
  write_text(repo / "src/arm/popcnt.h", "// NEON build\n" + helper);
  ProfileEntry e;
  e.kind = "cpu";
  e.name = e.function = "popcount64";
  e.file = "src/arm/popcnt.h";
  e.line = 3;
  e.share = 0.4;
  e.in_scope = true;
  const TargetChoice choice = resolve_target(repo.path(), ScopeConfig{}, e);
  EXPECT_EQ(choice.file, "src/arm/popcnt.h");
  EXPECT_EQ(choice.line, 3);
  EXPECT_NE(choice.note.find("of its 2 definitions, the profile's popcount64 is the one in src/arm/popcnt.h"),
            std::string::npos)
      << choice.note;
  const Located located = locate_target(repo.path(), ScopeConfig{}, choice.function, choice.signature, choice.file);
  EXPECT_EQ(located.target.file, "src/arm/popcnt.h");
  // Without the file the name stays ambiguous, and the message lists both.
  try {
    locate_target(repo.path(), ScopeConfig{}, choice.function, choice.signature);
    FAIL() << "two definitions of one signature located without a file";
  } catch (const SourceError& error) {
    EXPECT_NE(std::string(error.what()).find("is ambiguous; it is defined 2 times"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace maxcode

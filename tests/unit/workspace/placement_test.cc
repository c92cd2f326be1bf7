#include "runner/workspace/placement.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "runner/util/process.h"
#include "runner/workspace/scope.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

const std::string kFile =
    "#include <cuda_runtime.h>\n"                                              // 1
    "\n"                                                                       // 2
    "// One thread per element, straight from global memory.\n"                // 3
    "__global__ void scale_kernel(const float* in, float* out, int n) {\n"     // 4
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"                       // 5
    "  if (i < n) out[i] = 2.0f * in[i];\n"                                    // 6
    "}\n"                                                                      // 7
    "\n"                                                                       // 8
    "static const int kBlock = 128;\n"                                         // 9
    "\n"                                                                       // 10
    "void scale(const float* in, float* out, int n, cudaStream_t s) {\n"       // 11
    "  scale_kernel<<<(n + kBlock - 1) / kBlock, kBlock, 0, s>>>(in, out, n);\n"  // 12
    "}\n"                                                                      // 13
    "\n"                                                                       // 14
    "void other(float* p) { p[0] = 1; }\n";                                    // 15

Unit unit_of_scale() {
  return find_unit(kFile, "src/k.cu", find_definition(kFile, "scale", "src/k.cu"), {});
}

const std::string kNewKernel =
    "__global__ void scale_kernel(const float* in, float* out, int n) {\n"
    "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)\n"
    "    out[i] = 2.0f * in[i];\n"
    "}";

const std::string kNewLauncher =
    "void scale(const float* in, float* out, int n, cudaStream_t s) {\n"
    "  scale_kernel<<<256, 256, 0, s>>>(in, out, n);\n"
    "}";

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

const std::string kOldKernel = kFile.substr(kFile.find("__global__"), kFile.find("}\n") + 1 - kFile.find("__global__"));
const std::string kOldLauncher =
    kFile.substr(kFile.find("void scale("), kFile.find("}\n", kFile.find("void scale(")) + 1 - kFile.find("void scale("));

TEST(Placement, AKernelRewrittenInPlaceReplacesItWhereItStands) {
  const Unit unit = unit_of_scale();
  ASSERT_EQ(unit.names(), (std::vector<std::string>{"scale", "scale_kernel"}));
  const Placement p = place_definitions(kFile, unit, kNewKernel);
  ASSERT_EQ(p.error, "");
  EXPECT_EQ(p.text, replaced(kFile, kOldKernel, kNewKernel));
  EXPECT_EQ(find_definitions(p.text, "scale_kernel").size(), 1u) << "never two definitions of one function";
  const ScopeVerdict v = check_unit_file(kFile, p.text, unit, "src/k.cu");
  EXPECT_TRUE(v.ok) << v.reason;
}

TEST(Placement, KernelLauncherAndHelpersTogether) {
  const Unit unit = unit_of_scale();
  const std::string helper = "__device__ inline float twice(float x) { return 2.0f * x; }";
  // The order of the reply does not matter: each definition goes to its own place, and
  // the helper before the first of them in the file (the kernel), where both see it.
  const std::string code = kNewLauncher + "\n\n" + helper + "\n\n" + kNewKernel + "\n";
  const Placement p = place_definitions(kFile, unit, code);
  ASSERT_EQ(p.error, "");
  EXPECT_EQ(p.text, replaced(replaced(kFile, kOldKernel, helper + "\n\n" + kNewKernel), kOldLauncher, kNewLauncher));
  const ScopeVerdict v = check_unit_file(kFile, p.text, unit, "src/k.cu");
  EXPECT_TRUE(v.ok) << v.reason;
}

TEST(Placement, TheCandidatesCommentReplacesTheOriginalsOne) {
  const Unit unit = unit_of_scale();
  const Placement p = place_definitions(kFile, unit, "// Grid-stride loop.\n" + kNewKernel);
  ASSERT_EQ(p.error, "");
  EXPECT_EQ(p.text, replaced(kFile, "// One thread per element, straight from global memory.\n" + kOldKernel,
                             "// Grid-stride loop.\n" + kNewKernel));
  EXPECT_TRUE(check_unit_file(kFile, p.text, unit, "src/k.cu").ok);
}

TEST(Placement, TheTargetAloneReplacesItsDefinitionAsBefore) {
  const Unit unit = unit_of_scale();
  const std::string code = "static int blocks(int n) { return (n + 255) / 256; }\n" + kNewLauncher;
  const Placement p = place_definitions(kFile, unit, code);
  ASSERT_EQ(p.error, "");
  EXPECT_EQ(p.text, replace_definition(kFile, unit.functions[0].extent, code));
}

TEST(Placement, OutsideTheUnitIsRejectedByTheScopeRuleNamingTheFunction) {
  const Unit unit = unit_of_scale();
  const Placement p = place_definitions(kFile, unit, "void other(float* p) { p[0] = 2; }\n\n" + kNewKernel);
  ASSERT_EQ(p.error, "");  // placed as a helper; the scope rule says why it may not stand
  const ScopeVerdict v = check_unit_file(kFile, p.text, unit, "src/k.cu");
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.reason,
            "src/k.cu:4: the candidate defines 'other', which is outside the unit of 'scale' (scale, "
            "scale_kernel); it stands at src/k.cu:15. Only the unit's functions may be redefined: to let "
            "candidates change 'other', add it to targets.unit.add in .maxcode.json; or give the new "
            "function a name of its own");
}

TEST(Placement, CodeMustRedefineAUnitFunctionOnce) {
  const Unit unit = unit_of_scale();
  EXPECT_EQ(place_definitions(kFile, unit, "static int helper() { return 1; }").error,
            "the code defines none of the functions of the unit of 'scale' (scale, scale_kernel); give the "
            "complete new definition of at least one of them");
  EXPECT_EQ(place_definitions(kFile, unit, kNewKernel + "\n" + kNewKernel).error,
            "the code defines 'scale_kernel' twice; give each function of the unit one definition");
}

// What the unit placement is for, shown by the CUDA compiler: the reply that rewrites the
// kernel together with its launcher, placed the old way (everything at the target's
// place) holds the kernel twice; placed by unit it compiles.
TEST(Placement, NvccCompilesAKernelRewrittenInPlace) {
  const std::filesystem::path nvcc = "/usr/local/cuda/bin/nvcc";
  if (!std::filesystem::exists(nvcc)) GTEST_SKIP() << "no " << nvcc;
  testing::TempDir dir;
  const Unit unit = unit_of_scale();
  const std::string reply = kNewKernel + "\n\n" + kNewLauncher + "\n";
  testing::write_file(dir / "old.cu", replace_definition(kFile, unit.functions[0].extent, reply));
  testing::write_file(dir / "unit.cu", place_definitions(kFile, unit, reply).text);
  auto compile = [&](const std::string& name) {
    Command c;
    c.shell = nvcc.string() + " -c " + name + ".cu -o " + name + ".o";
    c.cwd = dir.path().string();
    c.timeout_s = 300;
    return run(c);
  };
  const Outcome old_way = compile("old");
  const std::string said = old_way.out + old_way.err;
  EXPECT_FALSE(old_way.ok());
  const std::size_t error = said.find("\"scale_kernel\" has already been defined");
  EXPECT_NE(error, std::string::npos) << said;
  const Outcome unit_way = compile("unit");
  EXPECT_TRUE(unit_way.ok()) << unit_way.out << unit_way.err;
  const std::size_t line = said.rfind('\n', error == std::string::npos ? 0 : error);
  std::printf("nvcc, old placement: exit %d: %s\nnvcc, unit placement: exit %d\n", old_way.exit_code,
              said.substr(line == std::string::npos ? 0 : line + 1, 120).c_str(), unit_way.exit_code);
}

}  // namespace
}  // namespace maxcode

#include "runner/workspace/call_shim.h"

#include <gtest/gtest.h>

#include "runner/util/files.h"
#include "runner/util/process.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

ShimPlan plan_of(const std::string& file, const std::string& name,
                 const std::map<std::string, std::string>& described = {}) {
  return plan_shim(file, find_definition(file, name, "t.cc"), described);
}

TEST(CallShim, InfersSizesFromTheOneIntegerParameter) {
  const std::string file = "static void scale(const float* __restrict__ in, float *out, std::size_t n, float k) {}\n";
  ShimPlan p = plan_of(file, "scale");
  ASSERT_TRUE(p.unsupported.empty()) << p.unsupported;
  EXPECT_EQ(p.interface, "inferred");
  ASSERT_EQ(p.params.size(), 4u);
  EXPECT_EQ(p.params[0].kind, ShimParam::Kind::kInput);
  EXPECT_EQ(p.params[0].element, "float");
  EXPECT_EQ(p.params[0].size, "n");
  EXPECT_EQ(p.params[1].kind, ShimParam::Kind::kOutput);
  EXPECT_EQ(p.params[2].kind, ShimParam::Kind::kScalar);
  EXPECT_EQ(p.params[3].kind, ShimParam::Kind::kOther);  // a float scalar sizes nothing
  EXPECT_TRUE(p.returns_void);
}

TEST(CallShim, AnOutputOfAnotherTypeIsNotSizedByTheInputsLength) {
  // A histogram's 256 bins: poisoning n of them would write past their end.
  const std::string file = "void histogram(const std::uint8_t* data, std::size_t n, std::uint32_t* bins) {}\n";
  ShimPlan p = plan_of(file, "histogram");
  EXPECT_EQ(p.interface, "inferred");
  EXPECT_EQ(p.params[0].size, "n");
  EXPECT_EQ(p.params[2].kind, ShimParam::Kind::kOutput);
  EXPECT_EQ(p.params[2].size, "");
  ShimPlan described = plan_of(file, "histogram", {{"data", "n"}, {"bins", "256"}});
  EXPECT_EQ(described.params[2].size, "256");
}

TEST(CallShim, TwoIntegerParametersNeedADescription) {
  const std::string file = "void blur(const float* in, float* out, int width, int height) {}\n";
  EXPECT_EQ(plan_of(file, "blur").interface, "none");
  ShimPlan p = plan_of(file, "blur", {{"in", "width*height"}, {"out", "width * height"}});
  ASSERT_TRUE(p.unsupported.empty()) << p.unsupported;
  EXPECT_EQ(p.interface, "described");
  EXPECT_EQ(p.params[0].size, "width*height");
}

TEST(CallShim, ADescriptionNamingNoParameterIsRefusedWithTheName) {
  const std::string file = "void blur(const float* in, float* out, int width, int height) {}\n";
  ShimPlan p = plan_of(file, "blur", {{"in", "w*height"}});
  EXPECT_NE(p.unsupported.find("'w'"), std::string::npos) << p.unsupported;
  p = plan_of(file, "blur", {{"src", "width"}});
  EXPECT_NE(p.unsupported.find("'src'"), std::string::npos) << p.unsupported;
}

TEST(CallShim, RefusesWhatItCannotWrap) {
  EXPECT_NE(plan_of("template <class T> void f(T* p, int n) {}\n", "f").unsupported.find("template"), std::string::npos);
  EXPECT_NE(plan_of("void f(float*, int n) {}\n", "f").unsupported.find("no name"), std::string::npos);
  EXPECT_NE(plan_of("__global__ void k(float* p, int n) {}\n", "k").unsupported.find("kernel"), std::string::npos);
  EXPECT_THROW(add_call_shim("void f(float*, int n) {}\n", find_definition("void f(float*, int n) {}\n", "f", "t"),
                             plan_of("void f(float*, int n) {}\n", "f"), {"/tmp/x", "t1", 0}),
               SourceError);
}

// The shimmed file compiles, keeps the function's result, and records every call; in
// perturb mode the input changes before calls after the first and the output is
// poisoned before each call.
TEST(CallShim, ShimmedCodeRecordsPerturbsAndPoisons) {
  TempDir dir;
  const std::string target =
      "#include <cstddef>\n"
      "// doubles each element; returns the sum\n"
      "float twice(const float* in, float* out, int n) {\n"
      "  float sum = 0;\n"
      "  for (int i = 0; i < n; ++i) sum += out[i] = 2 * in[i];\n"
      "  return sum;\n"
      "}\n";
  const fs::path records = dir / "records";
  fs::create_directories(records);
  ShimPlan plan = plan_of(target, "twice");
  ASSERT_EQ(plan.interface, "inferred");
  EXPECT_FALSE(plan.returns_void);
  const std::string shimmed = add_call_shim(target, find_definition(target, "twice", "t"), plan,
                                            {records.string(), "t1", 0, 2});
  EXPECT_NE(shimmed.find("twice__maxcode_impl_t1("), std::string::npos);
  write_text(dir / "twice.cc", shimmed);
  write_text(dir / "main.cc",
             "#include <cstdio>\n"
             "float twice(const float* in, float* out, int n);\n"
             "int main() {\n"
             "  float in[4] = {1, 2, 3, 4}, out[4] = {0, 0, 0, 0};\n"
             "  float s = 0;\n"
             "  for (int k = 0; k < 3; ++k) s = twice(in, out, 4);\n"
             "  std::printf(\"%g %g\\n\", s, out[0]);\n"
             "}\n");
  Command build;
  build.shell = "g++ -std=c++11 -O1 -o prog main.cc twice.cc";
  build.cwd = dir.path().string();
  Outcome built = run(build);
  ASSERT_TRUE(built.ok()) << built.err;
  Command prog;
  prog.shell = "./prog";
  prog.cwd = dir.path().string();
  Outcome observed = run(prog);
  ASSERT_TRUE(observed.ok()) << observed.err;
  EXPECT_EQ(observed.out, "20 2\n");  // unchanged behaviour without perturbation
  const std::string calls = read_text(records / "calls.txt");
  EXPECT_NE(calls.find("call 2 "), std::string::npos) << calls;
  EXPECT_NE(calls.find("arg 1 in in "), std::string::npos) << calls;
  EXPECT_EQ(calls.find("out 0 out"), std::string::npos) << "observe mode writes no outputs";

  write_text(records / "mode", "perturb\n");
  Outcome perturbed = run(prog);
  ASSERT_TRUE(perturbed.ok()) << perturbed.err;
  EXPECT_NE(perturbed.out, "20 2\n") << "inputs were perturbed, so the result changes";
  const std::string perturbed_calls = read_text(records / "calls.txt");
  EXPECT_NE(perturbed_calls.find("out 0 out float 4 1 0"), std::string::npos) << perturbed_calls;
  EXPECT_NE(perturbed_calls.find("out 1 out float 4 1 0"), std::string::npos) << perturbed_calls;
  EXPECT_EQ(perturbed_calls.find("out 2 out"), std::string::npos) << "only the first recorded_calls";
  EXPECT_EQ(fs::file_size(records / "out-0-out.bin"), 4 * sizeof(float));
  EXPECT_EQ(read_text(records / "out-0-out.bin").substr(0, 4), std::string("\0\0\0@", 4)) << "2.0f";
}

}  // namespace
}  // namespace maxcode

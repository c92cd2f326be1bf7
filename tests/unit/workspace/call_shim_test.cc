#include "runner/workspace/call_shim.h"

#include <gtest/gtest.h>

#include <cstring>

#include "runner/evaluate/call_records.h"
#include "runner/evaluate/precision.h"
#include "runner/util/files.h"
#include "runner/instrument/inject_paths.h"
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

// Comments are found by the source scanner: "//" inside a literal (an attribute's
// message here) is not one. A stripper of its own blanked the rest of that line, the
// function's name with it, and the function went unwrapped.
TEST(CallShim, ALiteralHoldingSlashesIsNotAComment) {
  const std::string file =
      "[[deprecated(\"see https://example.org/scale\")]] void scale(const float* in, /* out: */ float* out,\n"
      "                                                         std::size_t n) {}\n";
  ShimPlan p = plan_of(file, "scale");
  ASSERT_TRUE(p.unsupported.empty()) << p.unsupported;
  ASSERT_EQ(p.params.size(), 3u);
  EXPECT_EQ(p.params[1].kind, ShimParam::Kind::kOutput);
  EXPECT_EQ(p.params[1].size, "n");
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
                             plan_of("void f(float*, int n) {}\n", "f"), {"t1"}),
               SourceError);
}

// Runs `program` in `dir` with the shim's runtime loaded and `config` as its settings.
Outcome run_with_runtime(const fs::path& dir, const std::string& program, const fs::path& records,
                         const std::string& config) {
  InjectLibraries libs = find_inject_libraries();
  EXPECT_FALSE(libs.shim.empty()) << "libmaxcode_shim.so is built beside the tests (build/lib)";
  fs::remove_all(records);
  fs::create_directories(records);
  write_text(records / "config", config);
  Command prog;
  prog.shell = program;
  prog.cwd = dir.string();
  prog.env = {{"MAXCODE_SHIM_DIR", records.string()}, {"LD_PRELOAD", libs.shim.string()}, {"PATH", "/usr/bin:/bin"}};
  return run(prog);
}

// The shimmed file compiles, keeps the function's result, and records every call; with a
// perturbation key the input changes before every call and the output is poisoned
// before each, and every call's outputs (the returned number included) are recorded.
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
  ShimPlan plan = plan_of(target, "twice");
  ASSERT_EQ(plan.interface, "inferred");
  EXPECT_FALSE(plan.returns_void);
  EXPECT_EQ(plan.return_element, "float");
  const std::string shimmed = add_call_shim(target, find_definition(target, "twice", "t"), plan, {"t1"});
  EXPECT_NE(shimmed.find("twice__maxcode_impl_t1("), std::string::npos);
  write_text(dir / "twice.cc", shimmed);
  write_text(dir / "main.cc",
             "#include <cstdio>\n"
             "float twice(const float* in, float* out, int n);\n"
             "int main() {\n"
             "  float in[400], out[400];\n"
             "  for (int i = 0; i < 400; ++i) in[i] = (float)(i % 7);\n"
             "  float s = 0;\n"
             "  for (int k = 0; k < 3; ++k) s = twice(in, out, 400);\n"
             "  std::printf(\"%g %g\\n\", s, out[0]);\n"
             "}\n");
  Command build;
  build.shell = "g++ -std=c++11 -O1 -Wall -Wextra -Werror -o prog main.cc twice.cc";
  build.cwd = dir.path().string();
  Outcome built = run(build);
  ASSERT_TRUE(built.ok()) << built.err;
  Command plain;
  plain.shell = "./prog";
  plain.cwd = dir.path().string();
  const std::string unshimmed = run(plain).out;
  EXPECT_EQ(unshimmed, "2394 0\n") << "without the runtime the wrapper only calls the target";

  Outcome observed = run_with_runtime(dir.path(), "./prog", records, "key 0\n");
  ASSERT_TRUE(observed.ok()) << observed.err;
  EXPECT_EQ(observed.out, unshimmed) << "key 0 leaves the inputs alone";
  const std::string calls = read_text(records / "calls.txt");
  EXPECT_NE(calls.find("call 2 "), std::string::npos) << calls;
  EXPECT_NE(calls.find("arg 1 in in "), std::string::npos) << calls;
  EXPECT_NE(calls.find("out 2 out float 400 1 0"), std::string::npos) << "every call's output is recorded";
  EXPECT_NE(calls.find("out 2 return float 1 1 0"), std::string::npos) << "and the returned number";

  Outcome perturbed = run_with_runtime(dir.path(), "./prog", records, "key 12345\n");
  ASSERT_TRUE(perturbed.ok()) << perturbed.err;
  EXPECT_NE(perturbed.out, unshimmed) << "inputs were perturbed, so the result changes";
  Outcome again = run_with_runtime(dir.path(), "./prog", records, "key 12345\n");
  EXPECT_EQ(again.out, perturbed.out) << "one key, one perturbation";
  Outcome other = run_with_runtime(dir.path(), "./prog", records, "key 999\n");
  EXPECT_NE(other.out, perturbed.out) << "another key, another perturbation";
  EXPECT_EQ(fs::file_size(records / "out-0-out.bin"), 400 * sizeof(float));
  // The runtime's own time is reported apart from the target's.
  EXPECT_NE(read_text(records / "calls.txt").find("post 0 "), std::string::npos);
}

// A C header with an include guard, included twice in one C file and from a second
// C file, still builds under -Werror with the shim; the state is one per process (calls
// numbered across both files); an unsized output on the stack is found by how far the
// original's first calls write.
TEST(CallShim, WorksInAHeaderIncludedFromCTwice) {
  TempDir dir;
  const std::string header =
      "/* a C header */\n"
      "#ifndef HIST_H\n"
      "#define HIST_H\n"
      "#include <stddef.h>\n"
      "#include <stdint.h>\n"
      "static inline unsigned hist(const uint8_t* data, size_t n, uint32_t* bins) {\n"
      "  size_t i; unsigned nz = 0;\n"
      "  for (i = 0; i < 256; ++i) bins[i] = 0;\n"
      "  for (i = 0; i < n; ++i) bins[data[i]]++;\n"
      "  for (i = 0; i < 256; ++i) nz += bins[i] != 0;\n"
      "  return nz;\n"
      "}\n"
      "#endif\n";
  ShimPlan plan = plan_of(header, "hist");
  ASSERT_TRUE(plan.unsupported.empty()) << plan.unsupported;
  const std::string shimmed = add_call_shim(header, find_definition(header, "hist", "hist.h"), plan, {"c1"});
  EXPECT_LT(shimmed.find("#define HIST_H"), shimmed.find("maxcode_shim_table")) << "declarations inside the guard";
  write_text(dir / "hist.h", shimmed);
  write_text(dir / "a.c",
             "#include \"hist.h\"\n#include \"hist.h\"\n#include <stdio.h>\n#include <stdlib.h>\n"
             "unsigned other(const uint8_t* d, size_t n, uint32_t* b);\n"
             "int main(void) {\n"
             "  size_t n = 100000, i; uint8_t* data = malloc(n); uint32_t bins[256]; unsigned nz = 0; int k;\n"
             "  for (i = 0; i < n; ++i) data[i] = (uint8_t)(i * 2654435761u >> 13);\n"
             "  for (k = 0; k < 2; ++k) nz = hist(data, n, bins) + other(data, n, bins);\n"
             "  printf(\"%u %u\\n\", nz, bins[0]);\n  free(data);\n  return 0;\n}\n");
  write_text(dir / "b.c", "#include \"hist.h\"\nunsigned other(const uint8_t* d, size_t n, uint32_t* b) { return hist(d, n, b); }\n");
  Command build;
  build.shell = "gcc -std=c99 -O2 -Wall -Wextra -Werror -o prog a.c b.c";
  build.cwd = dir.path().string();
  Outcome built = run(build);
  ASSERT_TRUE(built.ok()) << built.err;
  const fs::path records = dir / "records";
  Outcome observed = run_with_runtime(dir.path(), "./prog", records, "key 0\ndiscover 1\n");
  ASSERT_TRUE(observed.ok()) << observed.err;
  const std::string calls = read_text(records / "calls.txt");
  EXPECT_NE(calls.find("call 3 "), std::string::npos) << "four calls from two files, numbered as one: " << calls;
  EXPECT_NE(calls.find("extent 0 bins 1024"), std::string::npos) << calls;
  EXPECT_NE(calls.find("arg 0 data in "), std::string::npos) << "data sized by n: " << calls;
  Outcome sized = run_with_runtime(dir.path(), "./prog", records, "key 5\nsize bins 1024\n");
  ASSERT_TRUE(sized.ok()) << sized.err;
  EXPECT_NE(read_text(records / "calls.txt").find("out 3 bins uint32_t 256 1 0"), std::string::npos);
}

// (const void* data, size) APIs (a popcount, a hash, a checksum): the buffer is bytes,
// sized by the one length and perturbed, so a result cached by pointer is caught; built
// as C and as C++ under -Werror (no sizeof(void)). A `void*` the target writes stays
// opaque.
TEST(CallShim, AConstVoidBufferIsBytesSizedByTheOneLength) {
  TempDir dir;
  const std::string header =
      "#ifndef POP_H\n#define POP_H\n#include <stdint.h>\n"
      "static inline uint64_t popcnt(const void* data, uint64_t size) {\n"
      "  const uint8_t* p = (const uint8_t*)data; uint64_t i, c = 0;\n"
      "  for (i = 0; i < size; ++i) c += (uint64_t)__builtin_popcount(p[i]);\n  return c;\n}\n#endif\n";
  ShimPlan plan = plan_of(header, "popcnt");
  ASSERT_TRUE(plan.unsupported.empty()) << plan.unsupported;
  EXPECT_EQ(plan.interface, "inferred");
  ASSERT_EQ(plan.params.size(), 2u);
  EXPECT_EQ(plan.params[0].kind, ShimParam::Kind::kInput);
  EXPECT_TRUE(plan.params[0].bytes);
  EXPECT_EQ(plan.params[0].element, "unsigned char");
  EXPECT_EQ(plan.params[0].size, "size");
  EXPECT_EQ(plan_of("static void fill(void* ctx, int n) {}\n", "fill").params[0].kind, ShimParam::Kind::kOther);
  write_text(dir / "pop.h", add_call_shim(header, find_definition(header, "popcnt", "pop.h"), plan, {"v1"}));
  const std::string main =
      "#include \"pop.h\"\n#include <stdio.h>\n"
      "int main(void) {\n  static unsigned char s[4096]; int k, i; uint64_t c = 0;\n"
      "  for (i = 0; i < 4096; ++i) s[i] = (unsigned char)(i * 37);\n"
      "  for (k = 0; k < 3; ++k) c = popcnt(s, sizeof s);\n  printf(\"%llu\\n\", (unsigned long long)c);\n"
      "  return 0;\n}\n";
  write_text(dir / "main.c", main);
  write_text(dir / "main.cc", main);
  for (const std::string compile : {"gcc -std=c99 -O2 -Wall -Wextra -Werror -o prog main.c",
                                    "g++ -std=c++17 -O2 -Wall -Wextra -Wpedantic -Werror -o prog-cc main.cc"}) {
    Command build;
    build.shell = compile;
    build.cwd = dir.path().string();
    Outcome built = run(build);
    ASSERT_TRUE(built.ok()) << compile << ": " << built.err;
  }
  const fs::path records = dir / "records";
  Outcome plain = run_with_runtime(dir.path(), "./prog", records, "key 0\n");
  ASSERT_TRUE(plain.ok()) << plain.err;
  const std::string calls = read_text(records / "calls.txt");
  EXPECT_NE(calls.find("arg 0 data in "), std::string::npos) << "data sized by size: " << calls;
  EXPECT_NE(calls.find("out 2 return uint64_t 1 1 0"), std::string::npos) << calls;
  Outcome perturbed = run_with_runtime(dir.path(), "./prog", records, "key 12345\n");
  ASSERT_TRUE(perturbed.ok()) << perturbed.err;
  EXPECT_NE(perturbed.out, plain.out) << "the bytes were perturbed, so the count changes";
}

// A validator's answer is its output: a bool returned is recorded on every call, in C
// (stdbool's macro) as in C++, and compared exactly. Unrecorded, a stale cached answer
// would pass the call check (a UTF-8 validator, issue 21 point 3 on real libraries).
TEST(CallShim, RecordsABoolReturnedFromC) {
  TempDir dir;
  const std::string header =
      "#ifndef ASCII_H\n#define ASCII_H\n#include <stdbool.h>\n#include <stddef.h>\n"
      "static inline bool all_ascii(const unsigned char* s, size_t n) {\n"
      "  size_t i;\n  for (i = 0; i < n; ++i) if (s[i] & 0x80) return false;\n  return true;\n}\n#endif\n";
  ShimPlan plan = plan_of(header, "all_ascii");
  ASSERT_TRUE(plan.unsupported.empty()) << plan.unsupported;
  EXPECT_EQ(plan.return_element, "bool");
  write_text(dir / "ascii.h", add_call_shim(header, find_definition(header, "all_ascii", "ascii.h"), plan, {"b1"}));
  write_text(dir / "main.c",
             "#include \"ascii.h\"\n#include <stdio.h>\n"
             "int main(void) {\n  unsigned char s[64]; int k, yes = 0; size_t i;\n"
             "  for (i = 0; i < 64; ++i) s[i] = (unsigned char)(i % 100);\n"
             "  for (k = 0; k < 3; ++k) yes += all_ascii(s, 64);\n  printf(\"%d\\n\", yes);\n  return 0;\n}\n");
  Command build;
  build.shell = "gcc -std=c99 -O2 -Wall -Wextra -Werror -o prog main.c";
  build.cwd = dir.path().string();
  Outcome built = run(build);
  ASSERT_TRUE(built.ok()) << built.err;
  const fs::path records = dir / "records";
  Outcome observed = run_with_runtime(dir.path(), "./prog", records, "key 0\n");
  ASSERT_TRUE(observed.ok()) << observed.err;
  EXPECT_EQ(observed.out, "3\n");
  EXPECT_NE(read_text(records / "calls.txt").find("out 2 return bool 1 1 0"), std::string::npos)
      << read_text(records / "calls.txt");
  EXPECT_EQ(compare_buffers("return", "bool", std::string(1, '\1'), std::string(1, '\0'), 0, 0).mismatches, 1u);
  EXPECT_EQ(compare_buffers("return", "bool", std::string(1, '\1'), std::string(1, '\1'), 0, 0).mismatches, 0u);
}

// A heap block's size comes from the runtime's allocator: an output the signature does
// not size, allocated with new or std::vector, is recorded whole.
TEST(CallShim, SizesAHeapOutputFromItsBlock) {
  TempDir dir;
  const std::string target =
      "#include <cstdint>\n"
      "#include <cstddef>\n"
      "void counts(const std::uint8_t* data, std::size_t n, std::uint32_t* bins) {\n"
      "  for (int b = 0; b < 16; ++b) bins[b] = 0;\n"
      "  for (std::size_t i = 0; i < n; ++i) bins[data[i] & 15]++;\n"
      "}\n";
  ShimPlan plan = plan_of(target, "counts");
  write_text(dir / "counts.cc", add_call_shim(target, find_definition(target, "counts", "t"), plan, {"h1"}));
  write_text(dir / "main.cc",
             "#include <cstdint>\n#include <cstdio>\n#include <vector>\n"
             "void counts(const std::uint8_t* data, std::size_t n, std::uint32_t* bins);\n"
             "int main() {\n  std::vector<std::uint8_t> data(5000);\n  std::vector<std::uint32_t> bins(16);\n"
             "  for (std::size_t i = 0; i < data.size(); ++i) data[i] = (std::uint8_t)(i * 7);\n"
             "  for (int k = 0; k < 3; ++k) counts(data.data(), data.size(), bins.data());\n"
             "  std::printf(\"%u\\n\", bins[3]);\n}\n");
  Command build;
  build.shell = "g++ -std=c++17 -O2 -o prog main.cc counts.cc";
  build.cwd = dir.path().string();
  Outcome built = run(build);
  ASSERT_TRUE(built.ok()) << built.err;
  const fs::path records = dir / "records";
  Outcome r = run_with_runtime(dir.path(), "./prog", records, "key 77\n");
  ASSERT_TRUE(r.ok()) << r.err;
  EXPECT_NE(read_text(records / "calls.txt").find("out 2 bins uint32_t 16 1 0"), std::string::npos)
      << read_text(records / "calls.txt");
}


// Device buffers, without a GPU: a stand-in for the CUDA driver (libcuda.so.1, the few
// entry points the runtime looks up) whose "device memory" is address space the program
// cannot touch (PROT_NONE) backed by a host shadow, and whose "kernel" runs only at the
// next synchronization. The runtime finds the buffers and their sizes through the
// driver (two integer parameters: no interface), perturbs the input on the device,
// synchronizes before reading, and records the output of every call.
TEST(CallShim, RecordsAndPerturbsDeviceBuffersThroughTheDriver) {
  TempDir dir;
  write_text(dir / "fakecuda.c",
             "#include <string.h>\n#include <stdlib.h>\n#include <sys/mman.h>\n"
             "typedef struct { unsigned long long at; size_t n; unsigned char* shadow; } A;\n"
             "static A allocs[8]; static int nallocs;\n"
             "static const float* pin; static float* pout; static size_t pn; static int pending;\n"
             "unsigned long long fake_bytes_copied;\n"
             "static A* find(unsigned long long p) { for (int i = 0; i < nallocs; ++i)\n"
             "  if (p >= allocs[i].at && p < allocs[i].at + allocs[i].n) return &allocs[i]; return 0; }\n"
             "void* fake_alloc(size_t n) { void* p = mmap(0, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);\n"
             "  allocs[nallocs].at = (unsigned long long)p; allocs[nallocs].n = n;\n"
             "  allocs[nallocs++].shadow = calloc(1, n); return p; }\n"
             "float* fake_shadow(const void* p) { A* a = find((unsigned long long)p);\n"
             "  return (float*)(a->shadow + ((unsigned long long)p - a->at)); }\n"
             "void fake_launch(const float* in, float* out, size_t n) { pin = in; pout = out; pn = n; pending = 1; }\n"
             "int cuCtxSynchronize(void) { if (pending) { const float* i = fake_shadow(pin); float* o = fake_shadow(pout);\n"
             "  for (size_t k = 0; k < pn; ++k) o[k] = 2 * i[k]; pending = 0; } return 0; }\n"
             "int cuPointerGetAttribute(void* d, int attr, unsigned long long p) { A* a = find(p); if (!a) return 1;\n"
             "  if (attr == 1) *(void**)d = (void*)0x1234; else if (attr == 2) *(unsigned*)d = 2;\n"
             "  else if (attr == 8) *(unsigned*)d = 0; else if (attr == 11) *(unsigned long long*)d = a->at;\n"
             "  else if (attr == 12) *(size_t*)d = a->n; else return 1; return 0; }\n"
             "int cuMemGetAddressRange_v2(unsigned long long* b, size_t* n, unsigned long long p) { A* a = find(p);\n"
             "  if (!a) return 1; *b = a->at; *n = a->n; return 0; }\n"
             "int cuCtxGetCurrent(void** c) { *c = (void*)0x1234; return 0; }\n"
             "int cuCtxPushCurrent_v2(void* c) { (void)c; return 0; }\n"
             "int cuCtxPopCurrent_v2(void** c) { *c = 0; return 0; }\n"
             "int cuMemcpyDtoH_v2(void* dst, unsigned long long src, size_t n) { A* a = find(src); if (!a) return 1;\n"
             "  memcpy(dst, a->shadow + (src - a->at), n); fake_bytes_copied += n; return 0; }\n"
             "int cuMemcpyHtoD_v2(unsigned long long dst, const void* src, size_t n) { A* a = find(dst); if (!a) return 1;\n"
             "  memcpy(a->shadow + (dst - a->at), src, n); fake_bytes_copied += n; return 0; }\n");
  const std::string target =
      "#include <cstddef>\n"
      "extern \"C\" void fake_launch(const float* in, float* out, std::size_t n);\n"
      "// an asynchronous launch: the work is done at the next synchronization\n"
      "void scale(const float* in, float* out, int w, int h) { fake_launch(in, out, (std::size_t)w * h); }\n";
  ShimPlan plan = plan_of(target, "scale");
  ASSERT_TRUE(plan.unsupported.empty()) << plan.unsupported;
  EXPECT_EQ(plan.interface, "none") << "two integer parameters: nothing sizes the buffers";
  write_text(dir / "scale.cc", add_call_shim(target, find_definition(target, "scale", "t"), plan, {"d1"}));
  write_text(dir / "main.cc",
             "#include <cstdio>\n#include <cstddef>\n"
             "extern \"C\" void* fake_alloc(std::size_t);\nextern \"C\" float* fake_shadow(const void*);\n"
             "extern \"C\" int cuCtxSynchronize(void);\n"
             "void scale(const float* in, float* out, int w, int h);\n"
             "int main() {\n  const int w = 64, h = 32, n = w * h;\n"
             "  float* in = (float*)fake_alloc(n * sizeof(float));\n"
             "  float* out = (float*)fake_alloc(n * sizeof(float));\n"
             "  for (int i = 0; i < n; ++i) fake_shadow(in)[i] = (float)(i % 7), fake_shadow(out)[i] = -1;\n"
             "  for (int k = 0; k < 3; ++k) scale(in, out, w, h);\n  cuCtxSynchronize();\n"
             "  double s = 0;\n  for (int i = 0; i < n; ++i) s += (double)fake_shadow(out)[i] * (i + 1);\n"
             "  std::printf(\"%.1f\\n\", s);\n}\n");
  Command build;
  build.shell =
      "gcc -shared -fPIC -O1 -Wl,-soname,libcuda.so.1 -o libcuda.so.1 fakecuda.c && "
      "g++ -std=c++17 -O1 -o prog main.cc scale.cc ./libcuda.so.1 -Wl,-rpath,'$ORIGIN'";
  build.cwd = dir.path().string();
  Outcome built = run(build);
  ASSERT_TRUE(built.ok()) << built.err;
  Command plain;
  plain.shell = "./prog";
  plain.cwd = dir.path().string();
  const std::string unshimmed = run(plain).out;
  ASSERT_FALSE(unshimmed.empty());

  const fs::path records = dir / "records";
  Outcome observed = run_with_runtime(dir.path(), "./prog", records, "key 0\n");
  ASSERT_TRUE(observed.ok()) << observed.err;
  EXPECT_EQ(observed.out, unshimmed) << "key 0 leaves the device input alone";
  const std::string calls = read_text(records / "calls.txt");
  EXPECT_NE(calls.find("arg 1 in in "), std::string::npos) << "the device input is sized by its allocation: " << calls;
  EXPECT_NE(calls.find("out 2 out float 2048 1 0"), std::string::npos) << "every call's device output: " << calls;
  const std::string first = read_text(records / "out-0-out.bin");
  ASSERT_EQ(first.size(), 2048 * sizeof(float));
  float value[3];
  std::memcpy(value, first.data(), sizeof value);
  EXPECT_EQ(value[0], 0.f) << "read after the launch's work was done (not the -1 it held before)";
  EXPECT_EQ(value[1], 2.f);
  EXPECT_EQ(value[2], 4.f);

  Outcome perturbed = run_with_runtime(dir.path(), "./prog", records, "key 12345\n");
  ASSERT_TRUE(perturbed.ok()) << perturbed.err;
  EXPECT_NE(perturbed.out, unshimmed) << "the device input was perturbed before the calls";
  Outcome again = run_with_runtime(dir.path(), "./prog", records, "key 12345\n");
  EXPECT_EQ(again.out, perturbed.out) << "one key, one perturbation";
  const std::string out2 = read_text(records / "out-2-out.bin");
  ASSERT_EQ(out2.size(), 2048 * sizeof(float));
  for (std::size_t i = 0; i < 2048; ++i) {
    float v;
    std::memcpy(&v, out2.data() + i * sizeof v, sizeof v);
    ASSERT_TRUE(v >= 0 && v <= 12 && v == static_cast<float>(static_cast<int>(v))) << "element " << i << ": " << v;
  }
}

// In a program without the CUDA driver, a pointer the kernel does not map (what a device
// address looks like to the host) is left alone: neither sized nor read.
TEST(CallShim, LeavesAnUnknownUnmappedPointerAlone) {
  TempDir dir;
  const std::string target = "void scale(const float* in, float* out, int w, int h) { (void)in; (void)out; (void)w; (void)h; }\n";
  ShimPlan plan = plan_of(target, "scale");
  write_text(dir / "scale.cc", add_call_shim(target, find_definition(target, "scale", "t"), plan, {"d2"}));
  write_text(dir / "main.cc",
             "#include <cstdio>\n#include <sys/mman.h>\n"
             "void scale(const float* in, float* out, int w, int h);\n"
             "int main() {\n  char* p = (char*)mmap(0, 1 << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);\n"
             "  for (int k = 0; k < 2; ++k) scale((const float*)(p + 4096), (float*)(p + 8192), 4, 4);\n"
             "  std::printf(\"ok\\n\");\n}\n");
  Command build;
  build.shell = "g++ -std=c++17 -O1 -o prog main.cc scale.cc";
  build.cwd = dir.path().string();
  Outcome built = run(build);
  ASSERT_TRUE(built.ok()) << built.err;
  const fs::path records = dir / "records";
  Outcome r = run_with_runtime(dir.path(), "./prog", records, "key 5\ndiscover 1\n");
  ASSERT_TRUE(r.ok()) << r.err;
  EXPECT_EQ(r.out, "ok\n");
  EXPECT_EQ(read_text(records / "calls.txt").find("out 1 out"), std::string::npos);
}


// The shim around a real CUDA host launcher (examples/cuda-plain's blur) compiles with
// nvcc, where the toolkit is installed (it is on the build machine; nothing runs).
TEST(CallShim, ACudaLauncherWithTheShimCompilesWithNvcc) {
  const fs::path nvcc = "/usr/local/cuda/bin/nvcc";
  if (!fs::exists(nvcc)) GTEST_SKIP() << "no nvcc at " << nvcc;
  TempDir dir;
  const fs::path example = testing::source_path("examples/cuda-plain");
  const std::string file = read_text(example / "src/blur.cu");
  ShimPlan plan = plan_of(file, "blur");
  ASSERT_TRUE(plan.unsupported.empty()) << plan.unsupported;
  write_text(dir / "blur.cu", add_call_shim(file, find_definition(file, "blur", "blur.cu"), plan, {"g1"}));
  Command build;
  build.shell = nvcc.string() + " -std=c++17 -c -I " + shell_quote((example / "src").string()) + " -o blur.o blur.cu";
  build.cwd = dir.path().string();
  build.timeout_s = 600;
  Outcome built = run(build);
  ASSERT_TRUE(built.ok()) << built.err;
  Command symbols;
  symbols.shell = "nm -C blur.o";
  symbols.cwd = dir.path().string();
  const std::string nm = run(symbols).out;
  EXPECT_NE(nm.find("blur__maxcode_impl_g1"), std::string::npos) << nm;
  EXPECT_NE(nm.find("w maxcode_shim_table"), std::string::npos) << "the runtime is reached through a weak table: " << nm;
}

// The probe (shim_runtime.cc): on one call in eight the target is called once more right
// before the recorded call, on inputs changed in a few elements, which are put back
// before the recorded call. A memo on top of an honest computation that recomputes only
// when 2 ms have passed since its last computation passes every recorded call when
// calls are further apart than that (as under the shim's own work between calls); right
// after a probe it hands the recorded call the probe's result, and that call's output
// differs from the honest version's on the same inputs. The probes fall on the same
// calls on both sides (the key's), are not calls of their own, and leave the benchmark
// what the recorded call produced.
TEST(CallShim, AProbeRightBeforeARecordedCallShowsAMemoByTime) {
  TempDir dir;
  const std::string honest =
      "#include <cstddef>\n"
      "float twice(const float* in, float* out, int n) {\n"
      "  float sum = 0;\n"
      "  for (int i = 0; i < n; ++i) sum += out[i] = 2 * in[i];\n"
      "  return sum;\n"
      "}\n";
  const std::string memo =
      "#include <chrono>\n#include <vector>\n"
      "float twice(const float* in, float* out, int n) {\n"
      "  static std::vector<float> saved;\n  static float saved_sum = 0;\n  static double done = -1;\n"
      "  auto now = [] { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); };\n"
      "  if (done >= 0 && (int)saved.size() == n && now() - done < 0.002) {\n"
      "    for (int i = 0; i < n; ++i) out[i] = saved[i];\n    return saved_sum;\n  }\n"
      "  float sum = 0;\n"
      "  for (int i = 0; i < n; ++i) sum += out[i] = 2 * in[i];\n"
      "  saved.assign(out, out + n);\n  saved_sum = sum;\n  done = now();\n"
      "  return sum;\n"
      "}\n";
  // Calls 3 ms apart: without the probe, the memo always recomputes.
  const std::string main_cc =
      "#include <cstdio>\n#include <unistd.h>\n#include <vector>\n"
      "float twice(const float* in, float* out, int n);\n"
      "int main() {\n"
      "  std::vector<float> in(4000), out(4000);\n"
      "  for (int i = 0; i < 4000; ++i) in[i] = (float)(i % 13);\n"
      "  float s = 0;\n"
      "  for (int k = 0; k < 16; ++k) {\n    s = twice(in.data(), out.data(), 4000);\n    usleep(3000);\n  }\n"
      "  double c = 0;\n  for (float v : out) c += v;\n"
      "  std::printf(\"%g %g\\n\", s, c);\n"
      "}\n";
  auto build_side = [&](const std::string& name, const std::string& target) {
    const fs::path side = dir / name;
    fs::create_directories(side);
    ShimPlan plan = plan_of(target, "twice");
    EXPECT_TRUE(plan.probe) << plan.no_probe;
    write_text(side / "twice.cc", add_call_shim(target, find_definition(target, "twice", "t"), plan, {"p1"}));
    write_text(side / "main.cc", main_cc);
    Command build;
    build.shell = "g++ -std=c++17 -O1 -Wall -Wextra -Werror -o prog main.cc twice.cc";
    build.cwd = side.string();
    Outcome built = run(build);
    EXPECT_TRUE(built.ok()) << built.err;
    return side;
  };
  const fs::path original = build_side("original", honest), candidate = build_side("candidate", memo);
  Command plain;
  plain.shell = "./prog";
  plain.cwd = original.string();
  const std::string unshimmed = run(plain).out;

  // Key 0 (the original's observing run): no probe.
  Outcome observed = run_with_runtime(original, "./prog", dir / "observed", "key 0\n");
  ASSERT_TRUE(observed.ok()) << observed.err;
  EXPECT_EQ(observed.out, unshimmed);
  EXPECT_EQ(read_text(dir / "observed" / "calls.txt").find("probe "), std::string::npos);

  const std::string config = "key 4242\n";
  Outcome want = run_with_runtime(original, "./prog", dir / "want", config);
  Outcome got = run_with_runtime(candidate, "./prog", dir / "got", config);
  ASSERT_TRUE(want.ok() && got.ok()) << want.err << got.err;
  const std::vector<CallRecord> w = read_call_records(dir / "want"), g = read_call_records(dir / "got");
  ASSERT_EQ(w.size(), 16u) << "a probe is no call of its own";
  ASSERT_EQ(g.size(), 16u);
  int probed = 0, stale = 0;
  double gap = 1;
  for (std::size_t i = 0; i < w.size(); ++i) {
    EXPECT_EQ(w[i].probed, g[i].probed) << "the same calls probed on both sides, call " << i;
    ASSERT_EQ(w[i].outputs.size(), 2u);
    const bool same = read_text(w[i].outputs[0].file) == read_text(g[i].outputs[0].file);
    if (!w[i].probed) {
      EXPECT_TRUE(same) << "call " << i << ": a call not preceded by a probe recomputes";
      continue;
    }
    ++probed;
    stale += !same;
    gap = std::min(gap, w[i].probe_gap_s);
    EXPECT_GT(w[i].probe_s, 0);
  }
  EXPECT_EQ(probed, 2) << "one call in eight";
  EXPECT_EQ(stale, probed) << "after each probe the memo hands out the probe's result";
  EXPECT_LT(gap, 2e-4) << "the recorded call starts microseconds after the probe returns";
}

// What the probe changes through a writable buffer of found size (which the target may
// read, so it is not poisoned) is put back before the recorded call: a target that adds
// to its output counts each recorded call once, probes or not.
TEST(CallShim, AProbeLeavesAnInPlaceBufferAsTheRecordedCallWouldFindIt) {
  TempDir dir;
  const std::string target =
      "#include <cstdint>\n#include <cstddef>\n"
      "void tally(const std::uint8_t* data, std::size_t n, std::uint32_t* t) {\n"
      "  t[0] += 1;\n"
      "  for (std::size_t i = 0; i < n; ++i) t[1] += data[i];\n"
      "}\n";
  ShimPlan plan = plan_of(target, "tally");
  ASSERT_TRUE(plan.probe) << plan.no_probe;
  write_text(dir / "tally.cc", add_call_shim(target, find_definition(target, "tally", "t"), plan, {"q1"}));
  write_text(dir / "main.cc",
             "#include <cstdint>\n#include <cstdio>\n#include <vector>\n"
             "void tally(const std::uint8_t* data, std::size_t n, std::uint32_t* t);\n"
             "int main() {\n  std::vector<std::uint8_t> data(5000);\n  std::vector<std::uint32_t> t(2);\n"
             "  for (std::size_t i = 0; i < data.size(); ++i) data[i] = (std::uint8_t)(i * 7);\n"
             "  for (int k = 0; k < 24; ++k) tally(data.data(), data.size(), t.data());\n"
             "  std::printf(\"%u\\n\", t[0]);\n}\n");
  Command build;
  build.shell = "g++ -std=c++17 -O2 -o prog main.cc tally.cc";
  build.cwd = dir.path().string();
  Outcome built = run(build);
  ASSERT_TRUE(built.ok()) << built.err;
  Outcome r = run_with_runtime(dir.path(), "./prog", dir / "records", "key 31\n");
  ASSERT_TRUE(r.ok()) << r.err;
  const std::vector<CallRecord> records = read_call_records(dir / "records");
  int probed = 0;
  for (const CallRecord& record : records) probed += record.probed;
  EXPECT_EQ(probed, 3) << read_text(dir / "records" / "calls.txt");
  EXPECT_EQ(r.out, "24\n") << "24 calls counted, not 24 plus the probes";
}

// A parameter the runtime could not put back after a probe (a reference, a pointer to
// something else) leaves the probe out of the wrapper.
TEST(CallShim, NoProbeWhereAnArgumentCouldNotBePutBack) {
  EXPECT_TRUE(plan_of("void f(const float* in, float* out, int n, double k) {}\n", "f").probe);
  ShimPlan p = plan_of("void f(const float* in, float* out, int n, std::vector<float>& log) {}\n", "f");
  EXPECT_FALSE(p.probe);
  EXPECT_NE(p.no_probe.find("'log'"), std::string::npos) << p.no_probe;
  EXPECT_FALSE(plan_of("void f(const float* in, float* out, int n, State* s) {}\n", "f").probe);
  const std::string file = "void f(const float* in, float* out, int n, State* s) {}\n";
  EXPECT_EQ(add_call_shim(file, find_definition(file, "f", "t"), plan_of(file, "f"), {"n1"}).find("probe_begin(maxcode_c)"),
            std::string::npos);
}

}  // namespace
}  // namespace maxcode

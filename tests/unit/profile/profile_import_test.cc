// Importers of profiles users already have (perf script, callgrind, gperftools) and
// of maxcode's own sampler file: real-format samples, and broken input that must fail
// with the line (or byte offset) named.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "runner/profile/callgrind_import.h"
#include "runner/profile/collect.h"
#include "runner/profile/perf_import.h"
#include "runner/profile/pprof_import.h"
#include "runner/profile/sampler_file.h"
#include "runner/profile/symbolize.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

using testing::read_file;
using testing::source_path;

// Self weight per function name, over all stacks (innermost frame).
std::map<std::string, double> self_by_function(const CallStacks& cs) {
  std::map<std::string, double> out;
  for (const auto& s : cs.stacks) out[cs.frames[s.frames.front()].function] += s.weight;
  return out;
}

template <typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const ProfileFormatError& e) {
    return e.what();
  }
  return "(no error)";
}

// ---------------------------------------------------------------- perf script

TEST(PerfScript, ReadsRecordedOutputWithCallChains) {
  // perf record -F 250 -e cpu-clock -g ./hot 3000000000; perf script (hot: 182
  // samples in hot(), 58 in warm(), 4 ms each).
  CallStacks cs = read_perf_script(source_path("tests/fixtures/profile/perf-script.txt"));
  EXPECT_EQ(cs.unit, "ns");
  ASSERT_EQ(cs.stacks.size(), 240u);
  auto self = self_by_function(cs);
  EXPECT_DOUBLE_EQ(self["hot"], 182 * 4e6);
  EXPECT_DOUBLE_EQ(self["warm"], 58 * 4e6);
  const CodeFrame& leaf = cs.frames[cs.stacks[0].frames[0]];
  EXPECT_EQ(leaf.module, "/tmp/st/hot");
  EXPECT_EQ(cs.frames[cs.stacks[0].frames[1]].function, "__libc_start_call_main");
}

TEST(PerfScript, SingleFrameSamplesSrclinesAndOtherEvents) {
  const std::string text =
      "bench 12/12 [001] 10.000001:   1000 task-clock:u:  401000 _Z3foov+0x10 (/w/bench)\n"
      "\n"
      "bench 12 10.5: cycles:u: \n"
      "\t 401000 _Z3foov+0x10 (/w/bench)\n"
      "\n"
      "bench 12 11.000001: 1000 task-clock:u: \n"
      "\t 401010 std::vector<int, std::allocator<int> >::size() const+0x4 (/w/bench)\n"
      "  vector.h:42\n"
      "\t 7f0000 [unknown] ([unknown])\n";
  CallStacks cs = parse_perf_script(text, "t.txt");
  EXPECT_EQ(cs.unit, "ns");
  ASSERT_EQ(cs.stacks.size(), 2u);  // the cycles sample is another event
  EXPECT_EQ(cs.frames[cs.stacks[0].frames[0]].function, "foo()");
  const CodeFrame& sized = cs.frames[cs.stacks[1].frames[0]];
  EXPECT_EQ(sized.function, "std::vector<int, std::allocator<int> >::size() const");
  EXPECT_EQ(sized.file, "vector.h");
  EXPECT_EQ(sized.line, 42);
  EXPECT_EQ(cs.frames[cs.stacks[1].frames[1]].function, "[unknown]+0x7f0000");
  ASSERT_EQ(cs.warnings.size(), 1u);
  EXPECT_NE(cs.warnings[0].find("cycles"), std::string::npos);
}

TEST(PerfScript, BrokenInputNamesTheLine) {
  EXPECT_NE(error_of([] { parse_perf_script("bench 1 1.0: 1 cpu-clock:\n\tnot-an-address foo (x)\n", "p.txt"); })
                .find("p.txt:2:"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_perf_script("\tabc foo (x)\n", "p.txt"); }).find("p.txt:1:"), std::string::npos);
  EXPECT_NE(error_of([] { parse_perf_script("hello world\n", "p.txt"); }).find("p.txt:1:"), std::string::npos);
  EXPECT_NE(error_of([] { parse_perf_script("", "p.txt"); }).find("no samples"), std::string::npos);
}

// ---------------------------------------------------------------- callgrind

TEST(Callgrind, ReadsRecordedOutput) {
  // valgrind --tool=callgrind --toggle-collect=main ./tiny (tiny.cc beside it);
  // callgrind_annotate: demo::heavy(int) 510,006 Ir, demo::light(int) 140,006 Ir.
  // Each is called once: GCC found them pure and hoisted them out of main's loop.
  CallStacks cs = read_callgrind(source_path("tests/fixtures/profile/callgrind.out.tiny"));
  EXPECT_EQ(cs.unit, "Ir");
  auto self = self_by_function(cs);
  EXPECT_DOUBLE_EQ(self["demo::heavy(int)"], 510006);
  EXPECT_DOUBLE_EQ(self["demo::light(int)"], 140006);
  double all = 0;
  for (const auto& [name, w] : self) all += w;
  EXPECT_DOUBLE_EQ(all, 863610);  // "I refs" of the run: every self cost, once
  EXPECT_EQ(cs.calls["demo::heavy(int)"], 1u);
  EXPECT_EQ(cs.calls["demo::light(int)"], 1u);
  EXPECT_EQ(cs.calls["check_match"], 1769u);
  // Lines of heavy() lie in tiny.cc, where its loop is.
  for (const auto& s : cs.stacks) {
    const CodeFrame& f = cs.frames[s.frames[0]];
    if (f.function == "demo::heavy(int)") {
      EXPECT_EQ(f.file, "/tmp/cg/tiny.cc");
      EXPECT_EQ(f.line, 5);
    }
  }
}

TEST(Callgrind, NameCompressionRelativePositionsAndCallCosts) {
  const std::string text =
      "# callgrind format\n"
      "version: 1\n"
      "positions: instr line\n"
      "events: Ir Dr\n"
      "ob=(1) /w/app\n"
      "fl=(1) /w/a.cc\n"
      "fn=(1) _Z4mainv\n"
      "0x10 16 20 3\n"
      "+3 * 5\n"
      "cfn=(2) func1'2\n"
      "calls=4 +50 7\n"
      "+2 +1 400\n"  // the call's inclusive cost: not main's self cost
      "fn=(2)\n"
      "0x90 51 100\n"
      "fl=(2) /w/b.cc\n"
      "fn=(3) func2\n"
      "-4 -31 700\n";
  CallStacks cs = parse_callgrind(text, "c.out");
  auto self = self_by_function(cs);
  EXPECT_DOUBLE_EQ(self["main()"], 25);
  EXPECT_DOUBLE_EQ(self["func1"], 100);
  EXPECT_DOUBLE_EQ(self["func2"], 700);
  EXPECT_EQ(cs.calls["func1"], 4u);
  for (const auto& s : cs.stacks) {
    const CodeFrame& f = cs.frames[s.frames[0]];
    if (f.function == "func2") EXPECT_EQ(f.line, 20);  // 51 - 31
    if (f.function == "func2") EXPECT_EQ(f.file, "/w/b.cc");
  }
}

TEST(Callgrind, BrokenInputNamesTheLine) {
  EXPECT_NE(error_of([] { parse_callgrind("events: Ir\nfn=(7)\n16 3\n", "c.out"); }).find("c.out:2:"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_callgrind("events: Ir\nfn=main\n16 x3\n", "c.out"); }).find("c.out:3:"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_callgrind("events: Ir\nfn=main\nwhat is this\n", "c.out"); }).find("c.out:3:"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_callgrind("fn=main\n16 3\n", "c.out"); }).find("c.out:2:"), std::string::npos);
  EXPECT_NE(error_of([] { parse_callgrind("version: 1\n", "c.out"); }).find("events"), std::string::npos);
}

// ---------------------------------------------------------------- gperftools / pprof

__attribute__((noinline)) int pprof_sampled_function(int n) {
  int s = 0;
  for (int i = 0; i < n; ++i) s += i * i;
  return s;
}

std::string words(std::initializer_list<std::uint64_t> values) {
  std::string out;
  for (std::uint64_t v : values) out.append(reinterpret_cast<const char*>(&v), sizeof v);
  return out;
}

TEST(Pprof, ReadsALegacyProfileOfThisProcessAndSymbolizesIt) {
  // A profile as gperftools writes it, with addresses of this very test program and
  // its memory map: the sampled function must come back by name, file and line.
  const auto pc = reinterpret_cast<std::uint64_t>(&pprof_sampled_function) + 4;
  const auto caller = reinterpret_cast<std::uint64_t>(&self_by_function) + 8;
  std::string bytes = words({0, 3, 0, 10000, 0});
  bytes += words({7, 2, pc, caller + 1});
  bytes += words({3, 1, caller});
  bytes += words({0, 1, 0});
  bytes += read_file("/proc/self/maps");
  bytes += "build=/somewhere\n";  // gperftools adds lines like this one

  AddressProfile p = parse_pprof(bytes, "prof.out");
  EXPECT_EQ(p.samples, 10u);
  EXPECT_DOUBLE_EQ(p.ns_per_sample, 10e6);
  ASSERT_EQ(p.stacks.size(), 2u);
  EXPECT_EQ(p.stacks[0].pcs.size(), 2u);
  CallStacks cs = symbolize(p);
  const CodeFrame& leaf = cs.frames[cs.stacks[0].frames[0]];
  EXPECT_EQ(leaf.function, "maxcode::(anonymous namespace)::pprof_sampled_function(int)");
  EXPECT_NE(leaf.decl_file.find("profile_import_test.cc"), std::string::npos);
  EXPECT_GT(leaf.decl_line, 0);
  EXPECT_DOUBLE_EQ(cs.stacks[0].weight, 70e6);
}

TEST(Pprof, BrokenInputNamesTheByteOffset) {
  EXPECT_NE(error_of([] { parse_pprof("not a profile at all, clearly not", "p.prof"); }).find("p.prof: byte 0"),
            std::string::npos);
  const std::string header = words({0, 3, 0, 10000, 0});
  std::string cut = header + words({5, 3, 0x1000});  // ends inside a record
  EXPECT_NE(error_of([&] { parse_pprof(cut, "p.prof"); }).find("byte 64"), std::string::npos);
  std::string deep = header + words({5, 1u << 30});
  EXPECT_NE(error_of([&] { parse_pprof(deep, "p.prof"); }).find("byte 40"), std::string::npos);
  EXPECT_NE(error_of([&] { parse_pprof(words({0, 3, 0, 0, 0}), "p.prof"); }).find("byte 24"), std::string::npos);
  EXPECT_TRUE(looks_like_pprof(header));
  EXPECT_FALSE(looks_like_pprof("maxcode-sampler 1\n"));
}

// ---------------------------------------------------------------- maxcode sampler file

TEST(SamplerFile, ReadsARecordedFile) {
  AddressProfile p = read_sampler_file(source_path("tests/fixtures/profile/cpu-recorded.txt"));
  EXPECT_EQ(p.pid, 18968);
  EXPECT_EQ(p.exe, "/tmp/st/hc");
  EXPECT_EQ(p.status, "exit");
  EXPECT_EQ(p.samples, 16u);
  EXPECT_FALSE(p.truncated);
  EXPECT_TRUE(p.sp_word);
  std::uint64_t recorded = 0;
  for (const auto& s : p.stacks) recorded += s.count;
  EXPECT_EQ(recorded, 16u);
  EXPECT_NEAR(p.ns_per_sample, 73419137.0 / 16, 1);
  EXPECT_NE(p.maps.find("/tmp/st/hc"), std::string::npos);
  // Its program is gone: addresses stay addresses, but ranking still works.
  CallStacks cs = symbolize(p);
  EXPECT_EQ(cs.stacks.size(), p.stacks.size());
}

TEST(SamplerFile, ACutShortFileIsReadAsFarAsItGoes) {
  const std::string text =
      "maxcode-sampler 1\npid 5\nexe /bin/x\nstatus exit\nsamples 3\ncpu_ns 3000000\nmaps\nend\nstacks\n"
      "2 401000 0 402000\n1 4010";
  AddressProfile p = parse_sampler_file(text, "cpu-5.txt");
  EXPECT_TRUE(p.truncated);
  ASSERT_EQ(p.stacks.size(), 1u);
  EXPECT_EQ(p.stacks[0].pcs, (std::vector<std::uint64_t>{0x401000, 0, 0x402000}));
  EXPECT_DOUBLE_EQ(p.ns_per_sample, 1e6);
}

TEST(SamplerFile, BrokenInputNamesTheLine) {
  const std::string head = "maxcode-sampler 1\npid 5\nmaps\nend\nstacks\n";
  EXPECT_NE(error_of([&] { parse_sampler_file(head + "2 40z000 0\nend\n", "f.txt"); }).find("f.txt:6:"),
            std::string::npos);
  EXPECT_NE(error_of([&] { parse_sampler_file(head + "x 401000 0\nend\n", "f.txt"); }).find("f.txt:6:"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_sampler_file("maxcode-sampler 1\npid five\n", "f.txt"); }).find("f.txt:2:"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_sampler_file("hello\n", "f.txt"); }).find("f.txt:1:"), std::string::npos);
  EXPECT_NE(error_of([] { parse_sampler_file("maxcode-sampler 1\nmaps\nend\nstack\n", "f.txt"); }).find("f.txt:4:"),
            std::string::npos);
}

// ---------------------------------------------------------------- detection and ranking

TEST(ImportedProfiles, FormatsAreDetectedAndRanked) {
  Collected perf;
  collect_file(source_path("tests/fixtures/profile/perf-script.txt"), perf);
  CodeOrigin origin({"/tmp/st"}, ScopeConfig{});
  Profile ranked = rank_profile(perf, origin);
  ASSERT_GE(ranked.functions.size(), 2u);
  EXPECT_EQ(ranked.functions[0].name, "hot");
  EXPECT_NEAR(ranked.functions[0].share, 182.0 / 240, 1e-9);
  EXPECT_EQ(ranked.functions[1].name, "warm");
  EXPECT_FALSE(ranked.functions[0].external);  // its object is in the repository

  Collected callgrind;
  collect_file(source_path("tests/fixtures/profile/callgrind.out.tiny"), callgrind);
  Profile by_ir = rank_profile(callgrind, CodeOrigin({"/tmp/cg"}, ScopeConfig{}));
  EXPECT_EQ(by_ir.unit, "Ir");
  EXPECT_EQ(by_ir.functions[0].function, "demo::heavy");
  EXPECT_EQ(by_ir.functions[0].calls, 1u);
  EXPECT_EQ(by_ir.functions[1].function, "demo::light");
  // Library code (std::sort's insides) is marked so.
  auto sort = std::find_if(by_ir.functions.begin(), by_ir.functions.end(),
                           [](const ProfileEntry& e) { return e.function == "std::__introsort_loop"; });
  ASSERT_NE(sort, by_ir.functions.end());
  EXPECT_TRUE(sort->external);

  // Instructions and nanoseconds do not add up.
  EXPECT_THROW(collect_file(source_path("tests/fixtures/profile/perf-script.txt"), callgrind), std::runtime_error);
}

}  // namespace
}  // namespace maxcode

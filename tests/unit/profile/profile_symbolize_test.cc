// Symbolization with elfutils on a program built during the test: with debug info
// (names, file:line, inline levels), without (names from the symbol table, definitions
// found in the sources, a warning), and stripped (object+offset, a warning).
#include <gtest/gtest.h>

#include <sstream>

#include "runner/util/files.h"
#include "runner/util/process.h"
#include "runner/profile/collect.h"
#include "runner/profile/symbolize.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

namespace fs = std::filesystem;
using testing::source_path;
using testing::TempDir;

// where.cc: shapes::area defined on line 7, twice() on 11 inlined into uses_inline()
// (17) at line 18.
constexpr int kAreaLine = 7;

struct Built {
  fs::path binary;
  std::uint64_t area = 0;
  std::uint64_t uses_inline = 0;
  std::string maps;
};

void sh(const std::string& command) {
  Command c;
  c.shell = command;
  c.timeout_s = 120;
  Outcome o = run(c);
  ASSERT_TRUE(o.ok()) << command << ": " << o.describe() << "\n" << o.tail();
}

// Builds where.cc with `flags` into dir/name (optionally stripped), runs it, and keeps
// the addresses and map it printed.
Built build_and_run(const fs::path& dir, const std::string& name, const std::string& flags, bool strip = false) {
  Built b;
  b.binary = dir / name;
  fs::copy_file(source_path("tests/fixtures/profile/programs/where.cc"), dir / "where.cc",
                fs::copy_options::overwrite_existing);
  sh("c++ -O1 -fno-omit-frame-pointer " + flags + " -o " + b.binary.string() + " " + (dir / "where.cc").string());
  if (strip) sh("strip --strip-all " + b.binary.string());
  Command c;
  c.shell = b.binary.string();
  Outcome o = run(c);
  EXPECT_TRUE(o.ok()) << o.describe();
  std::istringstream out(o.out);
  std::string first;
  std::getline(out, first);
  std::istringstream fields(first);
  fields >> std::hex >> b.area >> b.uses_inline;
  b.maps = o.out.substr(first.size() + 1);
  return b;
}

// A profile of `samples` hits at `pc` in the process `b` ran as.
Collected profile_at(const Built& b, std::uint64_t pc, std::uint64_t samples) {
  AddressProfile p;
  p.maps = b.maps;
  p.ns_per_sample = 1e6;
  p.stacks.push_back({samples, {pc}});
  Collected c;
  c.cpu = symbolize(p);
  c.have_cpu = true;
  return c;
}

class Symbolize : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    debug_ = new Built(build_and_run(dir_->path(), "where-g", "-g"));
    plain_ = new Built(build_and_run(dir_->path(), "where-plain", "-g0"));
    stripped_ = new Built(build_and_run(dir_->path(), "where-stripped", "-g", true));
  }
  static void TearDownTestSuite() {
    delete debug_;
    delete plain_;
    delete stripped_;
    delete dir_;
  }
  static TempDir* dir_;
  static Built* debug_;
  static Built* plain_;
  static Built* stripped_;
};

TempDir* Symbolize::dir_ = nullptr;
Built* Symbolize::debug_ = nullptr;
Built* Symbolize::plain_ = nullptr;
Built* Symbolize::stripped_ = nullptr;

TEST_F(Symbolize, DebugInfoGivesQualifiedNamesFilesAndLines) {
  Symbolizer s(debug_->maps);
  const auto& frames = s.frames(debug_->area, false);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].function, "shapes::area(double)");
  EXPECT_EQ(frames[0].symbol, "_ZN6shapes4areaEd");
  EXPECT_EQ(frames[0].module, debug_->binary.string());
  EXPECT_EQ(fs::path(frames[0].decl_file).filename(), "where.cc");
  EXPECT_EQ(frames[0].decl_line, kAreaLine);
  EXPECT_EQ(frames[0].line, kAreaLine);
  ModuleInfo info;
  EXPECT_EQ(s.module_of(debug_->area, &info), debug_->binary.string());
  EXPECT_TRUE(info.debug_info);
  EXPECT_TRUE(info.symbol_table);
  // A leaf function sets up no frame: its return address is at the stack pointer.
  EXPECT_TRUE(s.return_address_at_sp(debug_->area + 1));
}

TEST_F(Symbolize, InlinedCallsBecomeFramesOfTheirOwn) {
  Symbolizer s(debug_->maps);
  bool found = false;
  for (std::uint64_t pc = debug_->uses_inline; pc < debug_->uses_inline + 64 && !found; ++pc) {
    const auto& frames = s.frames(pc, false);
    if (frames.size() != 2) continue;
    found = true;
    EXPECT_EQ(frames[0].function.rfind("twice", 0), 0u) << frames[0].function;
    EXPECT_TRUE(frames[0].inlined);
    EXPECT_EQ(frames[0].decl_line, 11);
    EXPECT_EQ(frames[1].function, "uses_inline(int)");
    EXPECT_FALSE(frames[1].inlined);
    EXPECT_EQ(frames[1].line, 18);  // the line of the call that was inlined
    EXPECT_EQ(frames[1].decl_line, 17);
    EXPECT_GE(frames[0].line, 12);  // inside twice()
    EXPECT_LE(frames[0].line, 14);
  }
  EXPECT_TRUE(found) << "no address of uses_inline() lies in the inlined twice()";
}

TEST_F(Symbolize, ReturnAddressesAreLookedUpInsideTheCall) {
  Symbolizer s(debug_->maps);
  // The address just past a function is where a call to something else returns to:
  // as a return address it belongs to the function before it.
  const auto& frames = s.frames(debug_->area + 1, true);
  EXPECT_EQ(frames.back().function, "shapes::area(double)");
  const auto& unknown = s.frames(0x10, false);
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_EQ(unknown[0].function, "0x10");
}

TEST_F(Symbolize, WithoutDebugInfoNamesComeFromTheSymbolTableAndLinesFromTheSources) {
  Symbolizer s(plain_->maps);
  const auto& frames = s.frames(plain_->area + 2, false);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].function, "shapes::area(double)");
  EXPECT_TRUE(frames[0].file.empty());
  ModuleInfo info;
  s.module_of(plain_->area, &info);
  EXPECT_FALSE(info.debug_info);
  EXPECT_TRUE(info.symbol_table);

  Profile p = rank_profile(profile_at(*plain_, plain_->area + 2, 10), CodeOrigin({dir_->path()}, ScopeConfig{}));
  ASSERT_FALSE(p.functions.empty());
  EXPECT_EQ(p.functions[0].function, "shapes::area");
  EXPECT_EQ(p.functions[0].file, "where.cc");  // found by name in the sources
  EXPECT_EQ(p.functions[0].line, kAreaLine);
  EXPECT_TRUE(p.functions[0].in_scope);
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_NE(p.warnings[0].find("where-plain has no debug info"), std::string::npos);
}

TEST_F(Symbolize, AStrippedBinaryGivesObjectAndOffsetAndAWarning) {
  Symbolizer s(stripped_->maps);
  const auto& frames = s.frames(stripped_->area, false);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].function.rfind("where-stripped+0x", 0), 0u) << frames[0].function;
  Profile p = rank_profile(profile_at(*stripped_, stripped_->area, 10), CodeOrigin({dir_->path()}, ScopeConfig{}));
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_NE(p.warnings[0].find("where-stripped is stripped"), std::string::npos);
  EXPECT_FALSE(find_function_by_symbol(stripped_->binary.string(), "_ZN6shapes4areaEd"));
}

TEST_F(Symbolize, AFunctionIsFoundByItsMangledNameAsAKernelsHostStubWouldBe) {
  auto found = find_function_by_symbol(debug_->binary.string(), "_ZN6shapes4areaEd");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->function, "shapes::area(double)");
  EXPECT_EQ(fs::path(found->decl_file).filename(), "where.cc");
  EXPECT_EQ(found->decl_line, kAreaLine);
  EXPECT_FALSE(find_function_by_symbol(debug_->binary.string(), "_Z7missingv"));
  EXPECT_FALSE(find_function_by_symbol((dir_->path() / "nonexistent").string(), "_ZN6shapes4areaEd"));
}

}  // namespace
}  // namespace maxcode

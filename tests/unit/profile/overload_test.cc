// Overloads and template specializations told apart by profile entries: by the line
// debug info gives, else by the demangled parameter types.
#include "runner/profile/overload.h"

#include <gtest/gtest.h>

#include "runner/util/files.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

const char* kSource = R"(#include <cstddef>
#include <vector>
float norm(const float* v, size_t n) { return v[0] + n; }

double norm(const double* v, size_t n) { return v[0] + n; }

double norm(const std::vector<double>& v) { return v[0]; }

template <typename T>
T twice(T x) { return x + x; }

template <>
int twice<int>(int x) { return x << 1; }

int norm(unsigned int a, int b = 3) { return a + b; }
)";

class Overload : public ::testing::Test {
 protected:
  void SetUp() override {
    write_text(dir_ / "src/norm.cpp", kSource);
    norms_ = locate_definitions(dir_.path(), ScopeConfig{}, "norm");
    twices_ = locate_definitions(dir_.path(), ScopeConfig{}, "twice");
  }
  static ProfileEntry entry(const std::string& name, const std::string& function) {
    ProfileEntry e;
    e.name = name;
    e.function = function;
    return e;
  }
  testing::TempDir dir_;
  std::vector<Located> norms_, twices_;
};

TEST_F(Overload, DemangledParameterTypesPickTheDefinition) {
  ASSERT_EQ(norms_.size(), 4u);
  EXPECT_EQ(match_overload(norms_, entry("norm(double const*, unsigned long)", "norm")), 1u);
  EXPECT_EQ(match_overload(norms_, entry("norm(float const*, unsigned long)", "norm")), 0u);
  EXPECT_EQ(match_overload(norms_,
                           entry("norm(std::vector<double, std::allocator<double> > const&)", "norm")),
            2u);
  EXPECT_EQ(match_overload(norms_, entry("norm(unsigned int, int)", "norm")), 3u);
  EXPECT_EQ(match_overload(norms_, entry("norm(int, int)", "norm")), std::nullopt);  // unsigned is declared
  EXPECT_EQ(match_overload(norms_, entry("norm(char)", "norm")), std::nullopt);
}

TEST_F(Overload, TemplatesAndSpecializations) {
  ASSERT_EQ(twices_.size(), 2u);
  // A template parameter fits any type; the specialization fits its own.
  EXPECT_EQ(match_overload(twices_, entry("float twice<float>(float)", "twice")), 0u);
  // `int` fits both: the parameters alone cannot tell, and nothing else says.
  EXPECT_EQ(match_overload(twices_, entry("int twice<int>(int)", "twice")), std::nullopt);
  // Debug info's line decides.
  ProfileEntry with_line = entry("int twice<int>(int)", "twice");
  with_line.file = "src/norm.cpp";
  with_line.line = 13;
  EXPECT_EQ(match_overload(twices_, with_line), 1u);
}

TEST_F(Overload, TheDefinitionWithTheLargestShareIsChosenAndSaidSo) {
  Profile profile;
  ProfileEntry hot = entry("norm(double const*, unsigned long)", "norm");
  hot.share = 0.81;
  ProfileEntry cold = entry("norm(float const*, unsigned long)", "norm");
  cold.share = 0.02;
  ProfileEntry other = entry("other(int)", "other");
  other.share = 0.1;
  profile.functions = {hot, other, cold};
  const auto pick = pick_overload(norms_, profile, "norm");
  ASSERT_TRUE(pick);
  EXPECT_EQ(pick->index, 1u);
  EXPECT_DOUBLE_EQ(pick->share, 0.81);
  EXPECT_EQ(pick->note,
            "norm has 4 definitions; the profile says src/norm.cpp:5 is hot: norm(double const*, unsigned long), "
            "81.0% of CPU time; src/norm.cpp:3 2.0%; src/norm.cpp:7 0.0%; src/norm.cpp:15 0.0%");
  // The function never ran: the profile cannot tell.
  profile.functions = {other};
  EXPECT_FALSE(pick_overload(norms_, profile, "norm"));
}

}  // namespace
}  // namespace maxcode

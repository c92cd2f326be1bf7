// Library code or the repository's, by a function's demangled name (issue 24: functions
// with std:: in their return type or template arguments were classed "external" and
// could never become targets).
#include "runner/profile/origin.h"

#include <gtest/gtest.h>

namespace maxcode {
namespace {

TEST(LibraryFunction, TheFunctionsOwnNameDecidesNotItsTypes) {
  // The repository's, though std:: appears in the return type, template arguments or
  // parameters.
  EXPECT_FALSE(is_library_function("std::vector<int, std::allocator<int> > cctz::load(std::string const&)"));
  EXPECT_FALSE(is_library_function("int mylib::apply<std::plus<int> >(std::span<int const>)"));
  EXPECT_FALSE(is_library_function("std::pair<long, long> (anonymous namespace)::split(char const*)"));
  EXPECT_FALSE(is_library_function("mylib::Grid::operator()(int, int) const"));
  EXPECT_FALSE(is_library_function("mylib::run()::{lambda(int)#1}::operator()(int) const"));
  EXPECT_FALSE(is_library_function("histogram"));
  EXPECT_FALSE(is_library_function("std_dev(double const*, unsigned long)"));
  // The library's.
  EXPECT_TRUE(is_library_function("std::sort<int*>(int*, int*)"));
  EXPECT_TRUE(is_library_function("void std::__introsort_loop<int*, long>(int*, int*, long)"));
  EXPECT_TRUE(is_library_function("void cub::DeviceReduce::Sum<float*, float*>(void*, unsigned long&, float*, float*, int)"));
  EXPECT_TRUE(is_library_function("std::vector<int, std::allocator<int> >::_M_realloc_insert(int const&)"));
  EXPECT_TRUE(is_library_function("__libc_start_main"));
  EXPECT_TRUE(is_library_function("cublasSgemm_v2"));
}

TEST(CodeOriginTest, ARepositoryFunctionWithStdTypesIsNotExternal) {
  CodeOrigin origin({"/repo"}, ScopeConfig{});
  EXPECT_FALSE(origin.external("std::string tz::format(std::chrono::seconds)", "/repo/src/format.cc", "libtz.so"));
  EXPECT_TRUE(origin.external("std::string std::to_string(int)", "/usr/include/c++/12/bits/basic_string.h", ""));
}

}  // namespace
}  // namespace maxcode

#include "runner/util/names.h"

#include <gtest/gtest.h>

namespace maxcode {
namespace {

TEST(ProfileNames, DemanglesCppAndCudaNames) {
  EXPECT_EQ(demangle("_Z9histogramPKhmPj"), "histogram(unsigned char const*, unsigned long, unsigned int*)");
  EXPECT_EQ(demangle("_Z10reduce_sumILi256EEvPKfPfi"), "void reduce_sum<256>(float const*, float*, int)");
  EXPECT_EQ(demangle("_ZN7stencil4blurEPKfPfii"), "stencil::blur(float const*, float*, int, int)");
}

TEST(ProfileNames, LeavesOtherNamesAloneButDropsSymbolVersions) {
  EXPECT_EQ(demangle("main"), "main");
  EXPECT_EQ(demangle("vector_add"), "vector_add");  // extern "C" kernel
  EXPECT_EQ(demangle("memcpy@GLIBC_2.14"), "memcpy");
  EXPECT_EQ(demangle("_Znot a name"), "_Znot a name");
}

TEST(ProfileNames, FunctionNameDropsReturnTypeTemplatesAndParameters) {
  EXPECT_EQ(function_name_of("histogram(unsigned char const*, unsigned long, unsigned int*)"), "histogram");
  EXPECT_EQ(function_name_of("void reduce_sum<256>(float const*, float*, int)"), "reduce_sum");
  EXPECT_EQ(function_name_of("stencil::blur(float const*, float*, int, int)"), "stencil::blur");
  EXPECT_EQ(function_name_of("ns::Matrix<float, 4>::multiply(ns::Matrix<float, 4> const&) const"),
            "ns::Matrix::multiply");
  EXPECT_EQ(function_name_of("std::pair<int, int> split(int)"), "split");
  EXPECT_EQ(function_name_of("main"), "main");
}

TEST(ProfileNames, FunctionNameHandlesOperatorsAnonymousNamespacesLambdasAndClones) {
  EXPECT_EQ(function_name_of("Vec::operator()(int) const"), "Vec::operator()");
  EXPECT_EQ(function_name_of("operator<<(std::ostream&, Vec const&)"), "operator<<");
  EXPECT_EQ(function_name_of("Vec::operator bool() const"), "Vec::operator bool");
  EXPECT_EQ(function_name_of("(anonymous namespace)::kernel_body(float*)"), "kernel_body");
  EXPECT_EQ(function_name_of("void (anonymous namespace)::step<2>(float*)"), "step");
  EXPECT_EQ(function_name_of("render(int)::{lambda(int)#1}::operator()(int) const"), "render");
  EXPECT_EQ(function_name_of("hot(long) [clone .constprop.0] [clone .cold]"), "hot");
  EXPECT_EQ(function_name_of("fill.part.0"), "fill");
}

}  // namespace
}  // namespace maxcode

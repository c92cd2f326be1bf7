#include "runner/workspace/source_extent.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace maxcode {
namespace {

std::string text_of(const std::string& src, const Extent& e) {
  return src.substr(e.begin, e.end - e.begin);
}

// The one definition of `name` in `src`; its text must be exactly `expected`.
Extent expect_only(const std::string& src, const std::string& name, const std::string& expected) {
  const std::vector<Extent> all = find_definitions(src, name);
  EXPECT_EQ(all.size(), 1u) << "definitions of " << name;
  if (all.empty()) return {};
  EXPECT_EQ(text_of(src, all[0]), expected);
  return all[0];
}

TEST(SourceExtent, PlainFunctionWithLinesBodyAndSignature) {
  const std::string def = "int add(int a, int b) {\n  return a + b;\n}";
  const std::string src = "#include <cstdio>\n\n" + def + "\n\nint main() { return add(1, 2); }\n";
  const Extent e = expect_only(src, "add", def);
  EXPECT_EQ(e.line_begin, 3u);
  EXPECT_EQ(e.line_end, 5u);
  EXPECT_EQ(e.body_begin, src.find("{\n  return"));
  EXPECT_EQ(e.name, "add");
  EXPECT_EQ(e.signature, "int add(int a, int b)");
}

TEST(SourceExtent, LeadingCommentsAreNotPartOfTheExtent) {
  const std::string def = "void fn() {\n  // } fn() {\n  /* { */\n}";
  const std::string src = "// fn() { does things }\n/* void fn() { */\n" + def + "\n";
  const Extent e = expect_only(src, "fn", def);
  EXPECT_EQ(e.line_begin, 3u);
  EXPECT_EQ(e.line_end, 6u);
}

TEST(SourceExtent, CommentsInsideTheSignatureAreDroppedFromIt) {
  const std::string def = "int  fn(int a /* first */,\n       int b)  // tail\n{ return a; }";
  const Extent e = expect_only("\n" + def + "\n", "fn", def);
  EXPECT_EQ(e.signature, "int fn(int a , int b)");
}

// Comments become spaces where they stood (offsets and lines unchanged); "//" and "/*"
// inside literals are not comments, and a preprocessor line stays whole.
TEST(SourceExtent, BlankCommentsKeepsLiteralsOffsetsAndLines) {
  const std::string text =
      "void f(const char* url = \"http://x/*y*/\", /* n */ int n) { // why\n"
      "  char c = '/'; /* two\n lines */ return;\n"
      "#define G(x) x // kept\n"
      "}\n";
  const std::string plain = blank_comments(text);
  ASSERT_EQ(plain.size(), text.size());
  EXPECT_EQ(plain,
            "void f(const char* url = \"http://x/*y*/\",         int n) {       \n"
            "  char c = '/';       \n          return;\n"
            "#define G(x) x // kept\n"
            "}\n");
}

TEST(SourceExtent, StorageClassesAndConstexpr) {
  const std::string def = "static inline constexpr int sq(int x) { return x * x; }";
  expect_only("int y;\n" + def + "\nint z;\n", "sq", def);
}

TEST(SourceExtent, TemplateHeaderWithComparisonInDefaultArgument) {
  const std::string def =
      "template <typename T, int N = (3 > 2)>\nT scale(T x) {\n  return x * N;\n}";
  const Extent e = expect_only("struct A {};\n" + def + "\n", "scale", def);
  EXPECT_EQ(e.signature, "template <typename T, int N = (3 > 2)> T scale(T x)");
}

TEST(SourceExtent, DefaultTemplateArgumentCallIsNotTheFunction) {
  const std::string def = "template <int N = pick(1)>\nvoid run() {}";
  const Extent e = expect_only("constexpr int pick(int);\n" + def, "run", def);
  EXPECT_EQ(e.name, "run");
  EXPECT_TRUE(find_definitions(def, "pick").empty());
}

TEST(SourceExtent, ExplicitSpecializationAndPrimaryTemplate) {
  const std::string primary = "template <typename T>\nT zero() { return T(); }";
  const std::string special = "template <>\nint zero<int>() { return 0; }";
  const std::string src = primary + "\n" + special + "\n";
  const auto all = find_definitions(src, "zero");
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(text_of(src, all[0]), primary);
  EXPECT_EQ(text_of(src, all[1]), special);
  EXPECT_EQ(all[1].name, "zero<int>");
}

TEST(SourceExtent, CudaKernelWithLaunchBounds) {
  const std::string def =
      "__global__ void __launch_bounds__(256, 2)\nsaxpy(int n, float a, const float* x, float* y) "
      "{\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) y[i] = a * x[i] + y[i];\n}";
  const std::string src = "#include <cuda_runtime.h>\n" + def +
                          "\nvoid launch() { saxpy<<<1, 256>>>(1, 2.f, nullptr, nullptr); }\n";
  expect_only(src, "saxpy", def);
}

TEST(SourceExtent, CudaDeviceFunctions) {
  const std::string a = "__device__ __forceinline__ float sq(float x) { return x * x; }";
  const std::string b =
      "template <typename T>\n__host__ __device__ inline T cube(T x) { return x * x * x; }";
  const std::string src = a + "\n" + b + "\n";
  expect_only(src, "sq", a);
  expect_only(src, "cube", b);
}

TEST(SourceExtent, Attributes) {
  const std::string a = "[[nodiscard]] static int f1() { return 1; }";
  const std::string b = "__attribute__((always_inline)) inline int f2() { return 2; }";
  const std::string c = "[[gnu::hot]] [[deprecated(\"use f1() {\")]] int f3() { return 3; }";
  const std::string src = a + "\n" + b + "\n" + c + "\n";
  expect_only(src, "f1", a);
  expect_only(src, "f2", b);
  expect_only(src, "f3", c);
}

TEST(SourceExtent, MacrosBeforeTheDeclaration) {
  const std::string a = "MY_EXPORT void fn1() {}";
  const std::string b = "API(2) MAYBE_UNUSED int fn2(int x) { return x; }";
  const std::string src = "#define MY_EXPORT\n" + a + "\n" + b + "\n";
  const Extent e = expect_only(src, "fn1", a);
  EXPECT_EQ(e.line_begin, 2u);
  expect_only(src, "fn2", b);
}

TEST(SourceExtent, TrailingReturnTypeAndQualifiers) {
  const std::string a = "auto next(int a) -> decltype(a + 1) {\n  return a + 1;\n}";
  const std::string b = "template <typename T>\nvoid swap_all(T& x) noexcept(sizeof(T) > 4) {}";
  const std::string src = a + "\n" + b + "\n";
  expect_only(src, "next", a);
  expect_only(src, "swap_all", b);
}

TEST(SourceExtent, MemberFunctionsInClassBody) {
  const std::string get = "int get() const override { return v_; }";
  const std::string put = "[[nodiscard]] virtual bool put(int v) & final { v_ = v; return true; }";
  const std::string src = "class Box : public Base {\n public:\n  " + get + "\n protected:\n  " +
                          put + "\n private:\n  int v_ = 0;\n};\n";
  const Extent e = expect_only(src, "Box::get", get);
  EXPECT_EQ(e.name, "get");
  expect_only(src, "put", put);
  EXPECT_TRUE(find_definitions(src, "Other::get").empty());
}

TEST(SourceExtent, ConstructorInitializerLists) {
  const std::string out_of_class = "Foo::Foo() : a_{1}, b_(2) {}";
  const std::string in_class =
      "explicit Foo(int a) : Base<int>(a), a_{a}, b_(f(a)) {\n    a_++;\n  }";
  const std::string src = "struct Foo : Base<int> {\n  " + in_class +
                          "\n  Foo();\n  int a_, b_;\n};\n" + out_of_class + "\n";
  const auto all = find_definitions(src, "Foo::Foo");
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(text_of(src, all[0]), in_class);
  EXPECT_EQ(text_of(src, all[1]), out_of_class);
  EXPECT_EQ(all[1].name, "Foo::Foo");
  EXPECT_TRUE(find_definitions(src, "b_").empty());
}

TEST(SourceExtent, DestructorOutOfClass) {
  const std::string def = "Foo::~Foo() { release(); }";
  const Extent e = expect_only("Foo::Foo() {}\n" + def + "\n", "Foo::~Foo", def);
  EXPECT_EQ(e.name, "Foo::~Foo");
}

TEST(SourceExtent, OperatorNames) {
  const std::string call = "int operator()(int x) const { return x + 1; }";
  const std::string shift =
      "std::ostream& operator<<(std::ostream& os, const P& p) {\n  return os << p.x;\n}";
  const std::string conv = "explicit operator bool() const noexcept { return true; }";
  const std::string src =
      "struct P {\n  int x;\n  " + call + "\n  " + conv + "\n};\n" + shift + "\n";
  EXPECT_EQ(expect_only(src, "P::operator()", call).name, "operator()");
  EXPECT_EQ(expect_only(src, "operator<<", shift).name, "operator<<");
  expect_only(src, "operator bool", conv);
}

TEST(SourceExtent, NestedNamespacesQualifyNames) {
  const std::string def = "void fn() {}";
  const std::string src = "namespace a {\nnamespace b {\n" + def + "\n}  // namespace b\n" +
                          "void fn(int);\n}  // namespace a\nnamespace c::d {\nvoid fn() {}\n}\n";
  EXPECT_EQ(find_definitions(src, "fn").size(), 2u);
  expect_only(src, "a::b::fn", def);
  expect_only(src, "b::fn", def);
  expect_only(src, "c::d::fn", "void fn() {}");
  EXPECT_TRUE(find_definitions(src, "a::fn").empty());
  EXPECT_TRUE(find_definitions(src, "x::b::fn").empty());
}

TEST(SourceExtent, AnonymousAndInlineNamespaces) {
  const std::string def = "int helper() { return 1; }";
  const std::string src = "namespace outer {\nnamespace {\n" + def + "\n}\n}\n";
  expect_only(src, "outer::helper", def);
  const std::string inl = "namespace a { inline namespace v1 { void fn() {} } }\n";
  expect_only(inl, "a::fn", "void fn() {}");
  expect_only(inl, "a::v1::fn", "void fn() {}");
}

TEST(SourceExtent, OutOfClassMemberAndTemplateClassMember) {
  const std::string member = "void Cls::fn() {\n  x = 1;\n}";
  const std::string tmember = "template <typename T>\nvoid Box<T>::put(T v) {\n  v_ = v;\n}";
  const std::string src =
      "namespace ns {\nclass Cls { void fn(); int x; };\n" + member + "\n" + tmember + "\n}\n";
  const Extent e = expect_only(src, "ns::Cls::fn", member);
  EXPECT_EQ(e.name, "Cls::fn");
  EXPECT_EQ(e.line_begin, 3u);
  EXPECT_EQ(expect_only(src, "Box::put", tmember).name, "Box<T>::put");
}

TEST(SourceExtent, ClassWithAlignasAndNestedClass) {
  const std::string def = "float dot(const Vec& o) const { return x * o.x; }";
  const std::string src =
      "struct alignas(16) Vec {\n  struct Inner { int g() { return 1; } };\n  " + def +
      "\n  float x;\n};\n";
  expect_only(src, "Vec::dot", def);
  expect_only(src, "Vec::Inner::g", "int g() { return 1; }");
}

TEST(SourceExtent, StringLiteralsWithBracesAndTheName) {
  const std::string def = "const char* fn() {\n  return \"fn() { \\\" }\";\n}";
  const std::string src =
      "const char* s = \"void fn() {\";\n" + def + "\nint after() { return 0; }\n";
  expect_only(src, "fn", def);
  expect_only(src, "after", "int after() { return 0; }");
}

TEST(SourceExtent, RawStrings) {
  const std::string def = "std::string fn() {\n  return R\"x(void fn() { )\" } )x\";\n}";
  const std::string src = "auto k = LR\"(fn() {)\";\n" + def + "\nvoid g() {}\n";
  expect_only(src, "fn", def);
  expect_only(src, "g", "void g() {}");
}

TEST(SourceExtent, CharLiteralsAndDigitSeparators) {
  const std::string def =
      "bool fn(char c) {\n  if (c == '}' || c == '\\'') return true;\n  return c == '{';\n}";
  const std::string src = "int big = 1'000'000;\n" + def + "\nint h() { return '\"'; }\n";
  expect_only(src, "fn", def);
  expect_only(src, "h", "int h() { return '\"'; }");
}

TEST(SourceExtent, PreprocessorLinesAreSkipped) {
  const std::string def =
      "int fn(int x) {\n#ifdef FAST\n  return x;\n#endif\n  return fn_impl(x);\n}";
  const std::string src =
      "#define BODY { return 1; \\\n  }\n#define fn(x) ((x) + 1)\n#pragma once\n" + def + "\n";
  const Extent e = expect_only(src, "fn", def);
  EXPECT_EQ(e.line_begin, 5u);
  EXPECT_EQ(e.line_end, 10u);
}

TEST(SourceExtent, IfZeroBlocksAreOrdinaryCode) {
  const std::string old_def = "void fn() { old(); }";
  const std::string src = "#if 0\n" + old_def + "\n#endif\nvoid other() {}\n";
  expect_only(src, "fn", old_def);
}

TEST(SourceExtent, CallsDeclarationsAndLambdasAreNotDefinitions) {
  const std::string def = "void other() {\n  auto fn = [](int a) { return a; };\n  fn(2);\n}";
  const std::string src =
      "void fn(int);\nint x = fn(1);\nauto fn2 = [](int) { return 0; };\n" + def + "\n";
  EXPECT_TRUE(find_definitions(src, "fn").empty());
  EXPECT_TRUE(find_definitions(src, "fn2").empty());
  expect_only(src, "other", def);
}

TEST(SourceExtent, ExternCBlockAndExternCFunction) {
  const std::string a = "extern \"C\" __global__ void k1(float* p) { p[0] = 1; }";
  const std::string b = "int k2(void) { return 2; }";
  const std::string src = a + "\nextern \"C\" {\n" + b + "\n}\n";
  expect_only(src, "k1", a);
  expect_only(src, "k2", b);
}

TEST(SourceExtent, DeclarationStartsAfterAccessSpecifierAndPreviousDefinition) {
  const std::string def = "template <class U>\n  static U cast(int v) { return U(v); }";
  const std::string src = "class C {\n public:\n  int a() { return 1; }\n  " + def + "\n};\n";
  expect_only(src, "C::cast", def);
}

TEST(SourceExtent, PrecedingPreprocessorLineEndsTheWalkBack) {
  const std::string def = "__device__ void fn() {}";
  const std::string src = "FOO(x)\n#ifdef __CUDACC__\n" + def + "\n#endif\n";
  const Extent e = expect_only(src, "fn", def);
  EXPECT_EQ(e.line_begin, 3u);
}

TEST(SourceExtent, BlankLineEndsTheWalkBack) {
  const std::string def = "void bar() {}";
  const std::string src = "REGISTER(foo)\n\n" + def + "\n";
  EXPECT_EQ(expect_only(src, "bar", def).line_begin, 3u);
  // Without the blank line a macro invocation reads as part of the declaration.
  expect_only("REGISTER(foo)\n" + def, "bar", "REGISTER(foo)\n" + def);
}

TEST(SourceExtent, RefQualifiedAndDefaultedMembers) {
  const std::string def = "int S::f() && { return 1; }";
  const std::string src = "struct S { S() = default; S(const S&) = delete; int f() &&; };\n" + def;
  expect_only(src, "S::f", def);
  EXPECT_TRUE(find_definitions(src, "S::S").empty());
}

TEST(SourceExtent, MoreOperatorNames) {
  const std::string lt = "bool operator<(const A& a, const A& b) { return a.x < b.x; }";
  const std::string gt = "bool operator>(const A& a, const A& b) { return a.x > b.x; }";
  const std::string nw = "void* operator new[](std::size_t n) { return ::malloc(n); }";
  const std::string udl = "constexpr double operator\"\"_km(long double x) { return x; }";
  const std::string src = lt + "\n" + gt + "\n" + nw + "\n" + udl + "\n";
  expect_only(src, "operator<", lt);
  expect_only(src, "operator >", gt);
  expect_only(src, "operator new[]", nw);
  expect_only(src, "operator\"\"_km", udl);
}

TEST(SourceExtent, FunctionTryBlocksAreIgnoredWithoutLosingTheRest) {
  const std::string src =
      "int fn() try { return 1; } catch (...) { return 0; }\nint h() { return 2; }\n";
  EXPECT_TRUE(find_definitions(src, "fn").empty());
  expect_only(src, "h", "int h() { return 2; }");
}

TEST(SourceExtent, InitializersAndEnumsAreSteppedOver) {
  const std::string def = "int fn() { return kTable[0]; }";
  const std::string src =
      "static const int kTable[] = {1, 2, 3};\nenum class E : int { A, B };\n"
      "struct S { int a; } s = {1};\nstd::vector<int> v{1, 2};\n" +
      def + "\n";
  expect_only(src, "fn", def);
}

TEST(SourceExtent, RequiresClause) {
  const std::string def =
      "template <typename T>\n  requires std::integral<T>\nT twice(T x) {\n  return 2 * x;\n}";
  expect_only(def + "\n", "twice", def);
}

TEST(SourceExtent, BodyWithLocalClassesAndNestedBraces) {
  const std::string def =
      "void fn() {\n  struct L { void g() {} };\n  for (int i = 0; i < 2; ++i) { if (i) {} }\n"
      "  auto k = [&] { return fn; };\n}";
  const std::string src = def + "\nvoid tail() {}\n";
  expect_only(src, "fn", def);
  EXPECT_TRUE(find_definitions(src, "g").empty());
  expect_only(src, "tail", "void tail() {}");
}

TEST(SourceExtent, OverloadsNeedASignature) {
  const std::string src =
      "int fn(int a) { return a; }\n\nfloat fn(float a) { return a; }\nvoid g() {}\n";
  try {
    find_definition(src, "fn", "src/a.cpp");
    FAIL() << "expected SourceError";
  } catch (const SourceError& e) {
    EXPECT_EQ(std::string(e.what()),
              "2 definitions of 'fn' in src/a.cpp; pass a signature to pick one:\n"
              "  line 1: int fn(int a)\n  line 3: float fn(float a)");
  }
  const Extent f = find_definition(src, "fn", "src/a.cpp", "fn( float  a)");
  EXPECT_EQ(text_of(src, f), "float fn(float a) { return a; }");
  EXPECT_EQ(f.line_begin, 3u);
}

TEST(SourceExtent, SignatureThatMatchesNothingOrEverything) {
  const std::string src = "int fn(int a) { return a; }\nfloat fn(float a) { return a; }\n";
  try {
    find_definition(src, "fn", "src/a.cpp", "double");
    FAIL() << "expected SourceError";
  } catch (const SourceError& e) {
    EXPECT_EQ(std::string(e.what()),
              "no definition of 'fn' in src/a.cpp matches signature 'double'; definitions:\n"
              "  line 1: int fn(int a)\n  line 2: float fn(float a)");
  }
  EXPECT_THROW(find_definition(src, "fn", "src/a.cpp", "fn("), SourceError);
}

TEST(SourceExtent, NotFound) {
  const std::string src = "void fn(int);\n// void fn(int) {}\nconst char* s = \"void fn() {}\";\n";
  try {
    find_definition(src, "fn", "src/a.cpp");
    FAIL() << "expected SourceError";
  } catch (const SourceError& e) {
    EXPECT_EQ(std::string(e.what()), "no definition of 'fn' in src/a.cpp");
  }
}

TEST(SourceExtent, UnbalancedPreprocessorBranchesDoNotHideLaterFunctions) {
  const std::string src =
      "#if A\nvoid f(int a) {\n#else\nvoid f(long a) {\n#endif\n  use(a);\n}\n"
      "int later() { return 1; }\n";
  expect_only(src, "later", "int later() { return 1; }");
}

TEST(SourceExtent, AllDefinitionsCarryTheirQualifiedNames) {
  const std::string src =
      "namespace img {\nstruct Filter {\n  void run() { go(); }\n};\nvoid Filter::stop() {}\n}  // namespace img\n"
      "static int helper(int x) { return x; }\n";
  std::vector<Extent> all;
  for (const Definition& d : list_definitions(src)) all.push_back(d.extent);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].qualified, "img::Filter::run");
  EXPECT_EQ(all[1].qualified, "img::Filter::stop");
  EXPECT_EQ(all[2].qualified, "helper");
  EXPECT_EQ(all[2].line_begin, 7u);
}

TEST(SourceExtent, CodeTokensSkipCommentsAndDirectivesAndSplitChevrons) {
  const std::string src = "#define X 1\n// k<<<1,1>>>()\nk<<<g, \"b\">>>(p);\n";
  std::vector<std::string> words;
  for (const CodeToken& t : code_tokens(src)) words.push_back(src.substr(t.begin, t.end - t.begin));
  const std::vector<std::string> expected = {"k", "<", "<", "<", "g", ",", "\"b\"", ">", ">", ">", "(", "p", ")", ";"};
  EXPECT_EQ(words, expected);
  EXPECT_TRUE(code_tokens(src)[0].word);
  EXPECT_FALSE(code_tokens(src)[1].word);
}

TEST(SourceExtent, ListsEveryDefinitionWithItsQualifiedName) {
  const std::string src =
      "namespace ns {\n"
      "static int helper(int x) { return x; }\n"
      "struct Box {\n"
      "  int get() const { return v; }\n"
      "  int v;\n"
      "};\n"
      "template <typename T> T twice(T x) { return x + x; }\n"
      "}  // namespace ns\n"
      "int ns::Box2::put(int) { return 0; }\n";
  const std::vector<Definition> defs = list_definitions(src);
  ASSERT_EQ(defs.size(), 4u);
  EXPECT_EQ(defs[0].qualified, "ns::helper");
  EXPECT_EQ(defs[0].base_name, "helper");
  EXPECT_FALSE(defs[0].in_class);
  EXPECT_EQ(defs[1].qualified, "ns::Box::get");
  EXPECT_TRUE(defs[1].in_class);
  EXPECT_EQ(defs[2].base_name, "twice");
  EXPECT_EQ(defs[3].qualified, "ns::Box2::put");
  EXPECT_EQ(defs[3].base_name, "put");
  EXPECT_FALSE(defs[3].in_class) << "a member defined outside its class stands at namespace scope";
}

// Each mention of a name in the launcher below, with how it is used.
TEST(SourceExtent, NameUsesTellCallsLaunchesPointersAndValues) {
  const std::string src =
      "void launch(float* out, int n, int (*cb)(int), Fn* table) {\n"  // 1
      "  prepare(out, n);\n"                                            // 2
      "  scale_kernel<<<n / 256, 256>>>(out, n);\n"                     // 3
      "  typed_kernel<float><<<1, 32, 0, stream>>>(out);\n"             // 4
      "  int k = clamp<int>(n, 0, 9) + (n << 2) + (n < 3);\n"           // 5
      "  std::sort(out, out + n, less_than);\n"                         // 6
      "  void* p = (void*)&scale_kernel;\n"                             // 7
      "  (*cb)(k);\n"                                                   // 8
      "  cb(k);\n"                                                      // 9
      "  table[k](n);\n"                                                // 10
      "  obj.method(1);\n"                                              // 11
      "  ptr->member(2);\n"                                             // 12
      "  void (*local)(int) = pick();\n"                                // 13
      "  for (int i = 0; i < n; ++i) total += weight(i);\n"             // 14
      "}\n";
  const Extent e = find_definition(src, "launch", "k.cu");
  // Variables used as arguments are values too; the unit only asks about functions.
  const std::set<std::string> interesting = {"prepare", "scale_kernel", "typed_kernel", "clamp",
                                             "sort",    "less_than",    "cb",           "table",
                                             "method",  "member",       "local",        "pick",
                                             "weight",  "std",          "obj",          "ptr"};
  std::vector<std::string> seen;
  for (const NameUse& u : name_uses(src, e)) {
    if (!interesting.count(u.name)) continue;
    const char* kind = u.kind == NameUse::Kind::kCall                 ? "call"
                       : u.kind == NameUse::Kind::kLaunch             ? "launch"
                       : u.kind == NameUse::Kind::kValue              ? "value"
                       : u.kind == NameUse::Kind::kPointerCall        ? "pointer-call"
                                                                      : "pointer-declaration";
    seen.push_back(std::to_string(u.line) + " " + kind + " " + u.name);
  }
  const std::vector<std::string> expected = {
      "1 pointer-declaration cb",      "2 call prepare",
      "3 launch scale_kernel",         "4 launch typed_kernel",    "5 call clamp",
      "6 call sort",                   "6 value less_than",        "7 value scale_kernel",
      "8 pointer-call cb",             "9 call cb",                "10 pointer-call table",
      "13 pointer-declaration local",  "13 call pick",             "14 call weight"};
  EXPECT_EQ(seen, expected);
}

}  // namespace
}  // namespace maxcode

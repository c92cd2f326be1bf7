#include "runner/workspace/project_scan.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

#include "runner/util/files.h"
#include "runner/util/json_io.h"
#include "runner/workspace/knobs.h"
#include "runner/workspace/meson_scan.h"

namespace maxcode {

namespace fs = std::filesystem;

namespace {

// Folders that hold no code of the project itself (or build outputs): never searched
// for CMake files, and never proposed as scope.
const std::set<std::string> kNotProjectCode = {
    "build", "out", "cmake-build-debug", "cmake-build-release", "third_party", "thirdparty", "3rdparty",
    "external", "extern", "vendor", "deps", "node_modules", "maxcode-out"};
// Build systems init does not read, by the file at the top that shows each.
constexpr std::pair<const char*, const char*> kUnreadBuildFiles[] = {
    {"MODULE.bazel", "Bazel"}, {"WORKSPACE.bazel", "Bazel"},  {"WORKSPACE", "Bazel"},
    {"BUILD.bazel", "Bazel"},  {"configure.ac", "Autotools"}, {"configure", "a configure script"},
    {"SConstruct", "SCons"},   {"xmake.lua", "xmake"},        {"premake5.lua", "premake"}};
// Top-level folders of code that is not the library: kept out of the proposed scope.
const std::set<std::string> kNotLibrary = {"test", "tests", "testing", "bench", "benchmark", "benchmarks",
                                           "examples", "example", "docs", "doc", "scripts", "tools", "cmake", "replay"};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// A project file that is gone or unreadable reads as empty: the scan only suggests.
std::string slurp(const fs::path& path) { return try_read_text(path).value_or(""); }

bool is_source(const fs::path& path) {
  static const std::set<std::string> kExtensions = {".c", ".cc", ".cpp", ".cxx", ".cu", ".cuh", ".h", ".hh", ".hpp"};
  return kExtensions.count(lower(path.extension().string())) > 0;
}

// Every file below `root` worth reading, relative, skipping hidden folders, build
// outputs and third-party trees.
std::vector<std::string> project_files(const fs::path& root) {
  std::vector<std::string> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    const std::string name = it->path().filename().string();
    if (it->is_directory(ec)) {
      if (name.empty() || name[0] == '.' || kNotProjectCode.count(lower(name))) it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file(ec)) files.push_back(fs::relative(it->path(), root).generic_string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// CMake text without comments (a '#' outside a quoted argument ends the line).
std::string strip_cmake_comments(const std::string& text) {
  std::string out;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"' && (i == 0 || text[i - 1] != '\\')) quoted = !quoted;
    if (c == '#' && !quoted) {
      while (i < text.size() && text[i] != '\n') ++i;
      out += '\n';
      continue;
    }
    out += c;
  }
  return out;
}

struct CMakeCommand {
  std::string name;  // lower case
  std::vector<std::string> args;
};

// Commands as `name(args)`, parentheses nested inside the arguments allowed.
std::vector<CMakeCommand> cmake_commands(const std::string& text) {
  std::vector<CMakeCommand> commands;
  const std::string clean = strip_cmake_comments(text);
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::size_t i = 0;
  while (i < clean.size()) {
    if (!ident(clean[i]) || (i > 0 && ident(clean[i - 1]))) {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < clean.size() && ident(clean[end])) ++end;
    std::size_t open = end;
    while (open < clean.size() && (clean[open] == ' ' || clean[open] == '\t')) ++open;
    if (open >= clean.size() || clean[open] != '(') {
      i = end;
      continue;
    }
    int depth = 0;
    std::size_t close = open;
    for (; close < clean.size(); ++close) {
      if (clean[close] == '(') ++depth;
      if (clean[close] == ')' && --depth == 0) break;
    }
    CMakeCommand command{lower(clean.substr(i, end - i)), {}};
    std::istringstream args(clean.substr(open + 1, close - open - 1));
    std::string arg;
    while (args >> arg) {
      if (arg.size() >= 2 && arg.front() == '"' && arg.back() == '"') arg = arg.substr(1, arg.size() - 2);
      command.args.push_back(arg);
    }
    commands.push_back(std::move(command));
    i = close + 1;
  }
  return commands;
}

// "${CMAKE_CURRENT_SOURCE_DIR}/src/a.cc" -> "src/a.cc"; empty when a variable remains.
std::string source_argument(std::string arg) {
  for (const char* prefix : {"${CMAKE_CURRENT_SOURCE_DIR}/", "${CMAKE_CURRENT_LIST_DIR}/", "${PROJECT_SOURCE_DIR}/",
                             "${CMAKE_SOURCE_DIR}/"})
    if (arg.rfind(prefix, 0) == 0) arg = arg.substr(std::string(prefix).size());
  if (arg.find("${") != std::string::npos || arg.find("$<") != std::string::npos) return "";
  return arg;
}

std::string join_path(const std::string& a, const std::string& b) {
  if (a.empty() || a == ".") return b;
  if (b.empty() || b == ".") return a;
  return a + "/" + b;
}

struct Executable {
  std::string name;
  std::string dir;  // folder of the CMakeLists.txt that adds it, relative to the root
  std::vector<std::string> sources;
  std::vector<std::string> links;
  bool unresolved_sources = false;
  std::set<std::string> behind;  // the if() conditions it sits behind (this file's and its folder's)
  std::string via;               // the project's own function that adds it, if any
};

// CMake's control flow as far as the scan needs it: the if() conditions a command sits
// behind, and the bodies of function()/macro() definitions, which are templates and not
// commands of their own. A condition is kept when it is one name (`if(OPT)`,
// `if(${OPT})`); anything else, and an else() branch, hides nothing the scan can name.
template <class OnCommand, class OnBody>
void walk_cmake(const std::vector<CMakeCommand>& commands, OnCommand&& on_command, OnBody&& on_body) {
  std::vector<std::string> stack;
  for (std::size_t i = 0; i < commands.size(); ++i) {
    const CMakeCommand& c = commands[i];
    if (c.name == "function" || c.name == "macro") {
      const std::string end = "end" + c.name;
      std::size_t j = i + 1;
      std::vector<CMakeCommand> body;
      for (int depth = 1; j < commands.size(); ++j) {
        if (commands[j].name == c.name) ++depth;
        if (commands[j].name == end && --depth == 0) break;
        body.push_back(commands[j]);
      }
      on_body(c, body);
      i = j;
      continue;
    }
    if (c.name == "if") {
      std::string name = c.args.size() == 1 ? c.args[0] : "";
      if (name.size() > 3 && name.rfind("${", 0) == 0 && name.back() == '}') name = name.substr(2, name.size() - 3);
      stack.push_back(name);
    } else if ((c.name == "elseif" || c.name == "else") && !stack.empty()) {
      stack.back().clear();
    } else if (c.name == "endif" && !stack.empty()) {
      stack.pop_back();
    } else {
      std::set<std::string> behind;
      for (const std::string& s : stack)
        if (!s.empty()) behind.insert(s);
      on_command(c, behind);
    }
  }
}

// A project's function that adds an executable named by its first parameter
// (`function(add_base64_test name) add_executable(${name} ...)`): calls to it add one.
struct ExecutableFunction {
  std::vector<std::string> sources;  // listed literally in the body
};

std::string framework_of(const std::string& text) {
  if (text.find("benchmark/benchmark.h") != std::string::npos || text.find("BENCHMARK_MAIN") != std::string::npos)
    return "google-benchmark";
  if (text.find("nvbench/nvbench.cuh") != std::string::npos || text.find("NVBENCH_BENCH") != std::string::npos)
    return "nvbench";
  return "plain";
}

std::string framework_of_links(const std::vector<std::string>& links) {
  for (const auto& l : links) {
    const std::string name = lower(l);
    if (name == "benchmark::benchmark" || name == "benchmark::benchmark_main" || name == "benchmark" ||
        name == "benchmark_main")
      return "google-benchmark";
    if (name.rfind("nvbench::", 0) == 0 || name == "nvbench") return "nvbench";
  }
  return "plain";
}

bool is_test_program(const Executable& e, const std::set<std::string>& test_commands) {
  if (test_commands.count(e.name)) return true;
  for (const auto& l : e.links) {
    const std::string name = lower(l);
    if (name.find("gtest") != std::string::npos || name.find("gmock") != std::string::npos ||
        name.find("catch2") != std::string::npos || name.find("doctest") != std::string::npos)
      return true;
  }
  return false;
}

void read_presets(const fs::path& root, ProjectScan& scan) {
  const fs::path file = root / "CMakePresets.json";
  if (!fs::exists(file)) return;
  // Through the reader's depth limit: a copy of a value nested a million deep (value()
  // copies) would overflow the stack.
  nlohmann::json presets;
  try {
    presets = parse_json_input(slurp(file), file.string(), {.unique_keys = false});
  } catch (const JsonInputError&) {
    presets = nlohmann::json(nlohmann::json::value_t::discarded);
  }
  if (presets.is_discarded() || !presets.is_object()) {
    scan.notes.push_back("CMakePresets.json is not JSON maxcode can read: presets not used");
    return;
  }
  for (const auto& p : presets.value("configurePresets", nlohmann::json::array())) {
    if (!p.is_object() || p.value("hidden", false) || !p.contains("name")) continue;
    scan.preset = p["name"].get<std::string>();
    std::string dir = p.value("binaryDir", "");
    for (auto [macro, value] : {std::pair<std::string, std::string>{"${sourceDir}/", ""}, {"${presetName}", scan.preset}}) {
      for (std::size_t at; (at = dir.find(macro)) != std::string::npos;) dir.replace(at, macro.size(), value);
    }
    if (!dir.empty() && dir.find("${") == std::string::npos && dir.front() != '/') scan.binary_dir = dir;
    else if (!dir.empty())
      scan.notes.push_back("configure preset '" + scan.preset + "' has binaryDir " + p.value("binaryDir", "") +
                           ", which maxcode cannot place: benchmark paths assume build/");
    break;
  }
  if (scan.preset.empty()) return;
  for (const char* kind : {"buildPresets", "testPresets"}) {
    for (const auto& p : presets.value(kind, nlohmann::json::array())) {
      if (!p.is_object() || p.value("hidden", false) || p.value("configurePreset", "") != scan.preset) continue;
      (std::string(kind) == "buildPresets" ? scan.build_preset : scan.test_preset) = p.value("name", "");
      break;
    }
  }
}

// The CMake part of the scan, in two sweeps over the project's CMakeLists.txt files:
// first the project's shape (its options, its functions that add executables, the
// conditions each folder's add_subdirectory() sits behind), then each folder's
// commands (executables, tests, the runtime output folder), and last which of the
// executables are benchmarks.
class CMakeScan {
 public:
  CMakeScan(const fs::path& root, const std::vector<std::string>& files, ProjectScan& scan) : root_(root), scan_(scan) {
    for (const std::string& file : files)
      if (fs::path(file).filename() == "CMakeLists.txt")
        cmake_files_[fs::path(file).parent_path().generic_string()] = cmake_commands(slurp(root / file));
  }

  void run() {
    // Twice, so that a folder's conditions reach the folders it adds whatever the file order.
    for (int pass = 0; pass < 2; ++pass)
      for (const auto& [dir, commands] : cmake_files_) read_shape(dir, commands);
    for (const auto& [dir, commands] : cmake_files_) read_folder(dir, commands);
    scan_.ctest = testing_ && any_test_;
    if (any_test_ && !testing_)
      scan_.notes.push_back("add_test without enable_testing() or include(CTest): ctest finds no tests");
    for (const Executable& e : executables_)
      if (auto b = benchmark_of(e)) scan_.benchmarks.push_back(std::move(*b));
  }

 private:
  // A benchmark in test/ behind `if(BASE64_BUILD_TESTS)` is built only with
  // -DBASE64_BUILD_TESTS=ON: the options' defaults and the folders' conditions say so.
  void read_shape(const std::string& dir, const std::vector<CMakeCommand>& commands) {
    walk_cmake(
        commands,
        [&](const CMakeCommand& c, const std::set<std::string>& behind) {
          if (c.name == "option" && !c.args.empty()) options_[c.args[0]] = c.args.size() >= 2 && c.args.back() == "ON";
          if (c.name == "add_subdirectory" && !c.args.empty()) {
            std::set<std::string> all = folder_behind_[dir];
            all.insert(behind.begin(), behind.end());
            std::string sub = source_argument(c.args[0]);
            if (!sub.empty()) folder_behind_[join_path(dir, sub)].insert(all.begin(), all.end());
          }
        },
        [&](const CMakeCommand& definition, const std::vector<CMakeCommand>& body) {
          if (definition.args.size() < 2) return;
          const std::string param = "${" + definition.args[1] + "}";
          for (const CMakeCommand& c : body) {
            if (c.name != "add_executable" || c.args.empty() || c.args[0] != param) continue;
            ExecutableFunction f;
            for (std::size_t i = 1; i < c.args.size(); ++i)
              if (std::string s = source_argument(c.args[i]); !s.empty()) f.sources.push_back(join_path(dir, s));
            adders_[lower(definition.args[0])] = std::move(f);
          }
        });
  }

  void read_folder(const std::string& dir, const std::vector<CMakeCommand>& commands) {
    std::vector<std::pair<CMakeCommand, std::set<std::string>>> flat;
    walk_cmake(
        commands, [&](const CMakeCommand& c, const std::set<std::string>& behind) { flat.push_back({c, behind}); },
        [](const CMakeCommand&, const std::vector<CMakeCommand>&) {});
    for (auto& [c, behind_here] : flat) {
      std::set<std::string> behind = folder_behind_[dir];
      behind.insert(behind_here.begin(), behind_here.end());
      if (add_through_function(c, dir, behind)) continue;
      note_testing(c);
      if ((c.name == "project" || c.name == "enable_language") &&
          std::find(c.args.begin(), c.args.end(), "CUDA") != c.args.end())
        scan_.cuda = true;
      if (c.name == "set" && c.args.size() >= 2 && c.args[0] == "CMAKE_RUNTIME_OUTPUT_DIRECTORY")
        note_runtime_dir(c.args[1]);
      if (c.name == "add_executable" && !c.args.empty()) add_executable(c.args, dir, behind);
      if ((c.name == "target_sources" || c.name == "target_link_libraries") && !c.args.empty()) add_to_target(c, dir);
    }
  }

  // A call of the project's own function that adds an executable (`add_base64_test(benchmark ...)`).
  bool add_through_function(const CMakeCommand& c, const std::string& dir, const std::set<std::string>& behind) {
    const auto& a = c.args;
    auto adder = adders_.find(c.name);
    if (adder == adders_.end() || a.empty() || a[0].find("${") != std::string::npos) return false;
    Executable e{a[0], dir, adder->second.sources, {}, false, behind, c.name};
    for (std::size_t i = 1; i < a.size(); ++i) {
      const std::string s = source_argument(a[i]);
      if (!s.empty() && is_source(s)) e.sources.push_back(join_path(dir, s));
    }
    executables_.push_back(std::move(e));
    return true;
  }

  // Whether ctest will find tests, and which programs the tests run (not benchmarks).
  void note_testing(const CMakeCommand& c) {
    const auto& a = c.args;
    if (c.name == "enable_testing" || (c.name == "include" && !a.empty() && a[0] == "CTest")) testing_ = true;
    if (c.name != "add_test" && c.name != "gtest_discover_tests" && c.name != "gtest_add_tests" &&
        c.name != "catch_discover_tests" && c.name != "doctest_discover_tests")
      return;
    any_test_ = true;
    if (c.name == "add_test") {
      auto command = std::find(a.begin(), a.end(), "COMMAND");
      if (command != a.end() && command + 1 != a.end())
        test_commands_.insert(*(command + 1));
      else if (a.size() >= 2)
        test_commands_.insert(a[1]);
    } else if (!a.empty()) {
      test_commands_.insert(a[0]);
    }
  }

  // CMAKE_RUNTIME_OUTPUT_DIRECTORY, as a folder below the binary dir when it is one.
  void note_runtime_dir(const std::string& given) {
    runtime_dir_set_ = true;
    std::string value = given;
    for (const char* prefix : {"${CMAKE_BINARY_DIR}", "${PROJECT_BINARY_DIR}", "${CMAKE_CURRENT_BINARY_DIR}"})
      if (value.rfind(prefix, 0) == 0) value = value.substr(std::string(prefix).size());
    if (!value.empty() && value.front() == '/') value = value.substr(1);
    if (value.find("${") != std::string::npos) {
      scan_.notes.push_back("CMAKE_RUNTIME_OUTPUT_DIRECTORY is " + given + ": benchmark paths may need fixing");
      value.clear();
    }
    runtime_dir_ = value;
  }

  void add_executable(const std::vector<std::string>& a, const std::string& dir, const std::set<std::string>& behind) {
    if (std::find(a.begin(), a.end(), "IMPORTED") != a.end() || std::find(a.begin(), a.end(), "ALIAS") != a.end())
      return;
    Executable e{a[0], dir, {}, {}, false, behind, ""};
    for (std::size_t i = 1; i < a.size(); ++i) {
      if (a[i] == "WIN32" || a[i] == "MACOSX_BUNDLE" || a[i] == "EXCLUDE_FROM_ALL") continue;
      std::string source = source_argument(a[i]);
      if (source.empty())
        e.unresolved_sources = true;
      else
        e.sources.push_back(join_path(dir, source));
    }
    executables_.push_back(std::move(e));
  }

  // target_sources / target_link_libraries of an executable already seen.
  void add_to_target(const CMakeCommand& c, const std::string& dir) {
    const auto& a = c.args;
    for (Executable& e : executables_) {
      if (e.name != a[0]) continue;
      for (std::size_t i = 1; i < a.size(); ++i) {
        if (a[i] == "PRIVATE" || a[i] == "PUBLIC" || a[i] == "INTERFACE") continue;
        if (c.name == "target_link_libraries") {
          e.links.push_back(a[i]);
        } else if (std::string s = source_argument(a[i]); !s.empty()) {
          e.sources.push_back(join_path(dir, s));
        }
      }
    }
  }

  // An executable is a benchmark when it links or includes a benchmark framework, or is
  // named like one; a test program never is.
  std::optional<ScannedBenchmark> benchmark_of(const Executable& e) {
    if (is_test_program(e, test_commands_)) return std::nullopt;
    std::string text;
    bool cu = false;
    for (const auto& s : e.sources) {
      if (fs::exists(root_ / s)) text += slurp(root_ / s);
      cu = cu || lower(fs::path(s).extension().string()) == ".cu";
    }
    std::string framework = framework_of_links(e.links);
    if (framework == "plain") framework = framework_of(text);
    bool named = lower(e.name).find("bench") != std::string::npos;
    for (const auto& s : e.sources) named = named || lower(s).find("bench") != std::string::npos;
    if (framework == "plain" && !named) return std::nullopt;
    ScannedBenchmark b;
    b.name = e.name;
    b.sources = e.sources;
    b.framework = framework;
    b.cuda = cu || scan_.cuda;
    b.reads_seed = text.find("MAXCODE_SEED") != std::string::npos;
    b.binary = join_path(join_path(scan_.binary_dir, runtime_dir_set_ ? runtime_dir_ : e.dir), e.name);
    b.why = (e.via.empty() ? "add_executable(" : e.via + "(") + e.name + ") in " + join_path(e.dir, "CMakeLists.txt");
    for (const std::string& condition : e.behind) {
      auto option = options_.find(condition);
      if (option == options_.end() || option->second) continue;  // not an option, or on by default
      b.cmake_options.push_back(condition);
      b.why += ", built only with " + condition + "=ON";
    }
    if (framework == "google-benchmark") b.why += ", a Google Benchmark program";
    else if (framework == "nvbench") b.why += ", an nvbench program";
    else b.why += ", named like a benchmark";
    if (e.unresolved_sources)
      scan_.notes.push_back("add_executable(" + e.name + ") lists sources through variables: not all were read");
    return b;
  }

  const fs::path& root_;
  ProjectScan& scan_;
  std::map<std::string, std::vector<CMakeCommand>> cmake_files_;  // folder -> its commands
  std::map<std::string, bool> options_;                           // option(NAME "doc" ON|OFF) -> its default
  std::map<std::string, ExecutableFunction> adders_;
  std::map<std::string, std::set<std::string>> folder_behind_;
  std::vector<Executable> executables_;
  std::set<std::string> test_commands_;
  bool testing_ = false, any_test_ = false;
  std::string runtime_dir_;  // CMAKE_RUNTIME_OUTPUT_DIRECTORY below the binary dir, if set
  bool runtime_dir_set_ = false;
};

// Without CMake: benchmark programs already built, or sources of a framework.
void scan_plain(const fs::path& root, const std::vector<std::string>& files, ProjectScan& scan) {
  for (const std::string& file : files) {
    const fs::path path = root / file;
    const std::string name = lower(path.filename().string());
    std::error_code ec;
    const auto perms = fs::status(path, ec).permissions();
    const bool executable = !ec && (perms & fs::perms::owner_exec) != fs::perms::none && !is_source(path) &&
                            path.extension().empty();
    if (executable && name.find("bench") != std::string::npos) {
      ScannedBenchmark b;
      b.name = path.filename().string();
      b.binary = file;
      b.framework = framework_of(slurp(path));  // the library's symbols name it
      b.cuda = scan.cuda;
      b.why = "an executable file named like a benchmark";
      scan.benchmarks.push_back(std::move(b));
    }
  }
}

// A Makefile's rules, read as make would list them: `target ...: prerequisites` (not
// `:=` or `::=` assignments), recipes and variables aside. Rules whose target is named
// like a benchmark and is a file (not .PHONY) are benchmark programs, their source
// prerequisites the sources; `test`/`check` rules are the tests.
void scan_makefile(const fs::path& root, ProjectScan& scan) {
  const fs::path file = fs::exists(root / "Makefile") ? root / "Makefile" : root / "makefile";
  std::string text = slurp(file);
  // Continuation lines joined, comments dropped.
  for (std::size_t at = text.find("\\\n"); at != std::string::npos; at = text.find("\\\n", at)) text.replace(at, 2, " ");
  std::set<std::string> phony;
  std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> rules;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '\t') continue;  // a recipe
    line = line.substr(0, line.find('#'));
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos || colon == 0) continue;
    if (line.compare(colon, 2, ":=") == 0 || line.compare(colon, 3, "::=") == 0) continue;
    const std::size_t equals = line.find('=');
    if (equals != std::string::npos && equals < colon) continue;  // a variable whose value has a colon
    std::vector<std::string> targets, prerequisites;
    std::istringstream left(line.substr(0, colon)), right(line.substr(colon + 1));
    for (std::string w; left >> w;) targets.push_back(w);
    for (std::string w; right >> w;)
      if (w != ":" && w != "|") prerequisites.push_back(w);
    if (targets.size() == 1 && targets[0] == ".PHONY") {
      phony.insert(prerequisites.begin(), prerequisites.end());
      continue;
    }
    rules.push_back({targets, prerequisites});
  }
  std::set<std::string> seen;
  for (const auto& [targets, prerequisites] : rules) {
    for (const std::string& target : targets) {
      if (target == "test" || target == "check") scan.make_test_target = scan.make_test_target.empty() ? target : scan.make_test_target;
      if (phony.count(target) || target.find('%') != std::string::npos || target.find('$') != std::string::npos ||
          lower(target).find("bench") == std::string::npos || is_source(target) || !seen.insert(target).second)
        continue;
      const std::string ext = lower(fs::path(target).extension().string());
      if (ext == ".o" || ext == ".a" || ext == ".so") continue;
      ScannedBenchmark b;
      b.name = fs::path(target).filename().string();
      b.binary = fs::path(target).lexically_normal().generic_string();
      std::string text_of_sources;
      for (const std::string& p : prerequisites)
        if (is_source(p) && p.find('$') == std::string::npos) {
          b.sources.push_back(fs::path(p).lexically_normal().generic_string());
          text_of_sources += slurp(root / p);
        }
      b.framework = framework_of(text_of_sources);
      b.cuda = scan.cuda;
      b.reads_seed = text_of_sources.find("MAXCODE_SEED") != std::string::npos;
      b.why = "the Makefile's rule for " + target;
      b.make_target = target;
      scan.benchmarks.push_back(std::move(b));
    }
  }
}

// A Meson build: the executables a benchmark() call runs, and those named like a
// benchmark (in their name or a source's path) that no test() runs; built in build/
// under the folder of their meson.build.
void scan_meson(const fs::path& root, ProjectScan& scan) {
  MesonBuild build = read_meson_build(root);
  scan.meson_tests = !build.tested.empty();
  scan.notes.insert(scan.notes.end(), build.notes.begin(), build.notes.end());
  for (const MesonExecutable& e : build.executables) {
    const bool registered = build.benchmarked.count(e.name) > 0;
    bool named = lower(e.name).find("bench") != std::string::npos;
    for (const std::string& source : e.sources) named = named || lower(source).find("bench") != std::string::npos;
    if (!registered && (!named || build.tested.count(e.name))) continue;
    ScannedBenchmark b;
    b.name = e.name;
    b.binary = (fs::path(scan.binary_dir) / e.dir / e.name).lexically_normal().generic_string();
    std::string text_of_sources;
    for (const std::string& source : e.sources)
      if (is_source(source)) {
        b.sources.push_back(source);
        text_of_sources += slurp(root / source);
      }
    b.framework = framework_of(text_of_sources);
    b.cuda = scan.cuda;
    b.reads_seed = text_of_sources.find("MAXCODE_SEED") != std::string::npos;
    b.meson_options = e.options_on;
    const std::string file = (e.dir.empty() ? "" : e.dir + "/") + "meson.build";
    b.why = registered ? "benchmark() runs executable('" + e.name + "') in " + file
                       : "executable('" + e.name + "') in " + file + ", named like a benchmark";
    scan.benchmarks.push_back(std::move(b));
  }
}

// A folder that holds only benchmark sources is the benchmark's, not the library's.
// One that holds the library's code too stays in scope (issue 24: a time-zone library's
// src/, where its benchmark sits beside the code, was dropped whole), and the
// benchmark's own files are left out one by one.
void keep_library_dirs(const std::vector<std::string>& files, ProjectScan& scan) {
  std::set<std::string> bench_sources;
  for (const ScannedBenchmark& b : scan.benchmarks)
    for (const std::string& source : b.sources)
      if (fs::path(source).has_parent_path())
        bench_sources.insert(fs::path(source).lexically_normal().generic_string());
  std::vector<std::string> kept;
  for (const std::string& dir : scan.source_dirs) {
    bool library = false;
    std::vector<std::string> benches;
    for (const std::string& file : files) {
      const fs::path path(file);
      if (!is_source(path) || !path.has_parent_path() || path.begin()->string() != dir) continue;
      if (bench_sources.count(path.lexically_normal().generic_string()))
        benches.push_back(path.generic_string());
      else
        library = true;
    }
    if (!library && !benches.empty()) continue;
    kept.push_back(dir);
    scan.benchmark_sources_in_scope.insert(scan.benchmark_sources_in_scope.end(), benches.begin(), benches.end());
  }
  scan.source_dirs = kept;
}

}  // namespace

std::vector<std::string> scan_looked_for() {
  return {
      "CMakeLists.txt (add_executable targets that link Google Benchmark or nvbench, include "
      "<benchmark/benchmark.h> or <nvbench/nvbench.cuh>, or have \"bench\" in their name or source path)",
      "CMakePresets.json (the configure, build and test presets)",
      "without CMake: meson.build (executable()s that benchmark() runs, or with \"bench\" in their name or "
      "source path)",
      "without CMake or Meson: Makefile rules for files with \"bench\" in their name, and executable files so "
      "named",
      "tests: enable_testing() with add_test or gtest_discover_tests, and a tests/ or test/ folder"};
}

ProjectScan scan_project(const fs::path& root) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) throw std::runtime_error(root.string() + ": not a directory");
  ProjectScan scan;
  scan.root = root;
  scan.cmake = fs::exists(root / "CMakeLists.txt");
  scan.meson = !scan.cmake && fs::is_regular_file(root / "meson.build");
  scan.makefile = !scan.cmake && !scan.meson && (fs::exists(root / "Makefile") || fs::exists(root / "makefile"));
  scan.has_config = fs::exists(root / ".maxcode.json");
  if (!scan.cmake && !scan.meson && !scan.makefile)
    for (const auto& [file, system] : kUnreadBuildFiles)
      if (fs::is_regular_file(root / file)) {
        scan.unread_build_file = file;
        scan.unread_build_system = system;
        break;
      }
  const std::vector<std::string> files = project_files(root);
  std::set<std::string> library_dirs;
  for (const std::string& file : files) {
    const fs::path path(file);
    if (lower(path.extension().string()) == ".cu") scan.cuda = true;
    if (!is_source(path)) continue;
    auto top = path.begin();
    if (std::next(top) == path.end()) continue;  // a file at the top
    const std::string dir = top->string();
    if (!kNotLibrary.count(lower(dir))) library_dirs.insert(dir);
  }
  scan.source_dirs.assign(library_dirs.begin(), library_dirs.end());
  for (const char* dir : {"tests", "test"})
    if (fs::is_directory(root / dir)) scan.test_dirs.push_back(dir);
  if (scan.cmake) {
    read_presets(root, scan);
    CMakeScan(root, files, scan).run();
  } else if (scan.meson) {
    scan_meson(root, scan);
  } else {
    if (scan.makefile) scan_makefile(root, scan);
    scan_plain(root, files, scan);
    // A built binary the Makefile makes too is one benchmark, not two.
    std::set<std::string> made;
    std::vector<ScannedBenchmark> unique;
    for (ScannedBenchmark& b : scan.benchmarks)
      if (made.insert(b.binary).second) unique.push_back(std::move(b));
    scan.benchmarks = std::move(unique);
  }
  keep_library_dirs(files, scan);
  scan.knobs = repository_declares_knobs(root);
  return scan;
}

}  // namespace maxcode

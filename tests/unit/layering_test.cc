// The direction of dependencies between the stages (docs/architecture.md "Layers"): a
// file may include its own stage and lower stages, never a higher one, and never a
// sibling on the same level. The table below is the rule; a new stage folder must be
// added to it (and to the docs) before its files may include anything.
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/test_support.h"

namespace maxcode::testing {
namespace {

namespace fs = std::filesystem;

// Stage folder -> level. Lower levels know nothing of higher ones.
const std::map<std::string, int>& levels() {
  static const std::map<std::string, int> table{
      {"runner/util", 0},  // knows nothing of maxcode
      {"runner/core", 1},  // data types at the seams, config
      {"runner/instrument", 2},
      {"runner/workspace", 2},
      {"runner/llm", 2},
      {"runner/inject", 3},  // loaded into profiled programs
      {"runner/profile", 3},
      {"runner/evaluate", 3},
      {"runner/search", 4},
      {"runner/store", 5},
      {"runner/report", 5},
      {"runner/job", 6},
      {"bot/github", 7},
      {"bot/delivery", 8},
      {"bot/protocol", 8},  // the runner protocol's names, below the service and the worker
      {"bot/service", 9},
      {"bot/worker", 9},  // the worker (`maxcode runner`) speaks to the service over HTTP only
      {"cli", 10},
  };
  return table;
}

// "runner/evaluate/gpu/ncu.h" -> "runner/evaluate"; "cli/main.cc" -> "cli".
std::string stage_of(const std::string& relative) {
  auto first = relative.find('/');
  if (first == std::string::npos) return "";
  if (relative.compare(0, first, "cli") == 0) return "cli";
  auto second = relative.find('/', first + 1);
  if (second == std::string::npos) return relative.substr(0, first);  // a file directly in runner/ or bot/
  return relative.substr(0, second);
}

// Every include of `root`'s runner/, bot/ and cli/ that breaks the rule, as
// "file: includes X (stage A, level a, above/beside stage B, level b)".
std::vector<std::string> layering_violations(const fs::path& root) {
  std::vector<std::string> problems;
  static const std::regex include_line(R"re(^\s*#\s*include\s*"([^"]+)")re");
  for (const char* top : {"runner", "bot", "cli"}) {
    if (!fs::exists(root / top)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root / top)) {
      auto ext = entry.path().extension().string();
      if (!entry.is_regular_file() || (ext != ".cc" && ext != ".h")) continue;
      std::string file = fs::relative(entry.path(), root).generic_string();
      std::string from = stage_of(file);
      auto from_level = levels().find(from);
      if (from_level == levels().end()) {
        problems.push_back(file + ": in no stage of the layer table (add its folder to layering_test.cc)");
        continue;
      }
      std::ifstream in(entry.path());
      std::string line;
      while (std::getline(in, line)) {
        std::smatch m;
        if (!std::regex_search(line, m, include_line)) continue;
        std::string included = m[1];
        std::string to = stage_of(included);
        if (to == from) continue;
        auto to_level = levels().find(to);
        if (to_level == levels().end()) continue;  // a header of the test tree or a system header
        if (to_level->second > from_level->second)
          problems.push_back(file + ": includes " + included + " (" + to + " is above " + from + ")");
        else if (to_level->second == from_level->second)
          problems.push_back(file + ": includes " + included + " (" + to + " is beside " + from +
                             " on the same level)");
      }
    }
  }
  return problems;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

TEST(Layering, SourceTreeIncludesOnlyDownward) {
  auto problems = layering_violations(MAXCODE_SOURCE_DIR);
  EXPECT_TRUE(problems.empty()) << joined(problems);
}

TEST(Layering, StageOfAFile) {
  EXPECT_EQ(stage_of("runner/evaluate/gpu/ncu.h"), "runner/evaluate");
  EXPECT_EQ(stage_of("runner/util/files.h"), "runner/util");
  EXPECT_EQ(stage_of("bot/delivery/deliver.cc"), "bot/delivery");
  EXPECT_EQ(stage_of("cli/main.cc"), "cli");
  EXPECT_EQ(stage_of("runner/main.cc"), "runner");
}

// The check itself, on a planted tree: an upward include, a sideways include and a file
// outside any stage are each reported; a downward include is not.
TEST(Layering, ReportsUpwardSidewaysAndUnplacedFiles) {
  TempDir tree;
  write_file(tree / "runner/evaluate/evaluator.cc",
             "#include \"runner/evaluate/evaluator.h\"\n#include \"runner/util/files.h\"\n"
             "#include \"runner/search/search.h\"\n#include <vector>\n");
  write_file(tree / "runner/profile/profile.cc", "#include \"runner/evaluate/evaluator.h\"\n");
  write_file(tree / "runner/util/files.cc", "  #  include \"bot/github/jwt.h\"\n");
  write_file(tree / "runner/stray.cc", "");
  auto problems = layering_violations(tree.path());
  std::string text = joined(problems);
  ASSERT_EQ(problems.size(), 4u) << text;
  EXPECT_NE(text.find("runner/evaluate/evaluator.cc: includes runner/search/search.h (runner/search is above "
                      "runner/evaluate)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("runner/profile/profile.cc: includes runner/evaluate/evaluator.h (runner/evaluate is "
                      "beside runner/profile on the same level)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("runner/util/files.cc: includes bot/github/jwt.h"), std::string::npos) << text;
  EXPECT_NE(text.find("runner/stray.cc: in no stage"), std::string::npos) << text;
}

}  // namespace
}  // namespace maxcode::testing

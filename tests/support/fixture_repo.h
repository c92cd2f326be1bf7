// A copy of tests/fixtures/<name> in a temp dir, set up as the evaluator sees it:
// config, snapshot, target, knobs and an Evaluator with the baseline prepared.
#pragma once

#include <memory>
#include <string>

#include "runner/evaluate/evaluator.h"
#include "runner/workspace/locate.h"
#include "support/test_support.h"

namespace maxcode::testing {

class FixtureRepo {
 public:
  explicit FixtureRepo(const std::string& name);
  const std::filesystem::path& repo() const { return repo_; }
  Config& config() { return config_; }
  // Builds the evaluator over the fixture as it is now (call after editing config()).
  Evaluator& evaluator();
  // The compiler cache the evaluator shares between runs (none unless set, before evaluator()).
  void set_ccache_dir(const std::filesystem::path& dir) { ccache_dir_ = dir; }
  // SHA-256 of every file of the user's copy: proof it was not modified.
  std::map<std::string, std::string> fingerprint() const;

 private:
  TempDir dir_;
  std::filesystem::path repo_;
  Config config_;
  Progress progress_{stderr, true};
  SourceSnapshot source_;
  Located located_;
  std::unique_ptr<Evaluator> evaluator_;
  std::filesystem::path ccache_dir_;
};

Candidate definition_candidate(const std::string& id, const std::string& code);

// A copy of examples/<name> at `dest` whose config times 10 to 30 rounds after one
// warm-up, so that end-to-end tests (delivery, the service) stay short.
void copy_example_with_short_timing(const std::string& name, const std::filesystem::path& dest);

}  // namespace maxcode::testing

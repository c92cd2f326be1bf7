#include "support/fixture_repo.h"

#include <nlohmann/json.hpp>

#include "runner/util/files.h"

namespace maxcode::testing {

FixtureRepo::FixtureRepo(const std::string& name) {
  repo_ = dir_ / "repo";
  copy_tree(source_path("tests/fixtures/" + name), repo_);
  config_ = load_config(repo_ / ".maxcode.json");
}

Evaluator& FixtureRepo::evaluator() {
  if (evaluator_) return *evaluator_;
  source_ = capture_source(repo_, dir_ / "work" / "source", config_.workspace.exclude);
  located_ = locate_target(source_.root, config_.scope, config_.targets.functions.at(0));
  auto knobs = find_declared_knobs(read_text(source_.root / located_.target.file), located_.target.file);
  const Unit unit = find_unit(source_.root, config_.scope, located_, config_.targets.unit);
  located_.target.unit = unit.names();
  evaluator_ = std::make_unique<Evaluator>(config_, source_, located_.target, unit, knobs,
                                           EvaluatorOptions{dir_ / "work", ccache_dir_, false}, progress_);
  evaluator_->prepare_baseline();
  return *evaluator_;
}

std::map<std::string, std::string> FixtureRepo::fingerprint() const {
  std::map<std::string, std::string> hashes;
  for (const auto& path : list_files(repo_)) hashes[path] = sha256_hex(read_text(repo_ / path));
  return hashes;
}

Candidate definition_candidate(const std::string& id, const std::string& code) {
  Candidate c;
  c.id = id;
  c.origin = "test";
  c.definition = code;
  return c;
}

void copy_example_with_short_timing(const std::string& name, const std::filesystem::path& dest) {
  copy_tree(source_path("examples/" + name), dest);
  nlohmann::json config = nlohmann::json::parse(read_text(dest / ".maxcode.json"));
  config["acceptance"] = {{"min_speedup", 1.05}, {"min_rounds", 10}, {"max_rounds", 30}, {"warmup_rounds", 1}};
  write_text(dest / ".maxcode.json", config.dump(2));
}

}  // namespace maxcode::testing

#include "runner/search/checkpoint.h"

#include <cstdio>

#include "runner/util/files.h"
#include "runner/util/json_io.h"

namespace maxcode {

namespace fs = std::filesystem;

void write_checkpoint(const fs::path& out, const Checkpoint& c) {
  nlohmann::json entries = nlohmann::json::array();
  for (const auto& e : c.state.trajectory)
    entries.push_back({{"step", e.step}, {"candidate", to_json(e.candidate)}, {"evaluation", to_json(e.evaluation)}});
  nlohmann::json j{{"schema", "maxcode.checkpoint/1"},
                   {"run_id", c.run_id},
                   {"policy", c.policy},
                   {"target", to_json(c.target)},
                   {"evaluations", c.state.evaluations},
                   {"proposed", c.state.proposed},
                   {"best", c.state.best ? nlohmann::json(*c.state.best) : nlohmann::json(nullptr)},
                   {"trajectory", entries},
                   {"spend", c.spend},
                   {"repository", c.repository},
                   {"config_file", c.config_file},
                   {"replay_dir", c.replay_dir}};
  const fs::path tmp = out / "checkpoint.json.tmp";
  write_text(tmp, dump_json(j, 1) + "\n");
  fs::rename(tmp, out / "checkpoint.json");  // atomic on one file system
}

Checkpoint read_checkpoint(const fs::path& out) {
  const fs::path file = out / "checkpoint.json";
  nlohmann::json j;
  try {
    j = parse_json_input(read_text(file), file.string());
  } catch (const JsonInputError& e) {
    throw std::runtime_error(std::string(e.what()) + " (cannot resume from it)");
  } catch (const std::exception& e) {
    throw std::runtime_error(file.string() + ": cannot resume: " + e.what());
  }
  if (j.value("schema", "") != "maxcode.checkpoint/1")
    throw std::runtime_error(file.string() + ": not a maxcode checkpoint");
  try {
    Checkpoint c;
    c.run_id = j.at("run_id").get<std::string>();
    c.policy = j.at("policy").get<std::string>();
    c.target = target_from_json(j.at("target"));
    c.state.target = c.target;
    c.state.evaluations = j.at("evaluations").get<int>();
    c.state.proposed = j.value("proposed", static_cast<int>(j.at("trajectory").size()));
    if (!j.at("best").is_null()) c.state.best = j["best"].get<std::size_t>();
    for (const auto& e : j.at("trajectory"))
      c.state.trajectory.push_back({e.at("step").get<int>(), candidate_from_json(e.at("candidate")),
                                    evaluation_from_json(e.at("evaluation"))});
    if (c.state.best && *c.state.best >= c.state.trajectory.size())
      throw std::runtime_error("best index out of range");
    c.spend = j.value("spend", nlohmann::json::object());
    c.repository = j.value("repository", "");
    c.config_file = j.value("config_file", "");
    c.replay_dir = j.value("replay_dir", "");
    return c;
  } catch (const std::exception& e) {
    throw std::runtime_error(file.string() + ": damaged checkpoint: " + e.what());
  }
}

}  // namespace maxcode

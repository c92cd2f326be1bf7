// The cheat suite and the faults, on a real GPU (ctest label `gpu`; skipped without
// one). Every candidate in examples/cuda-kernels/cheats/ and faults/ goes through one
// `maxcode optimize --policy replay` run against the example's transpose, with a real
// improvement last as a control: each cheat must get the verdict and reason
// cheats/expected.json names, each fault must end as crashed or timeout without
// stopping the run, and the control must still win afterwards (the GPU stays usable).
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "runner/util/files.h"
#include "runner/util/process.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::source_path;
using testing::TempDir;
using testing::have_gpu;

TEST(CheatSuite, EveryCheatIsRejectedWithItsReason) {
  // Found first, so that a program carried to another machine fails here, naming the
  // path, rather than deep inside a run.
  const fs::path example = source_path("examples/cuda-kernels");
  ASSERT_TRUE(fs::exists(example / ".maxcode.json"))
      << example << " not found: set MAXCODE_SOURCE_DIR to the checkout";
  if (!have_gpu()) GTEST_SKIP() << "no GPU here (nvidia-smi -L fails); example at " << example;
  TempDir dir;
  const json cheats = json::parse(read_text(example / "cheats/expected.json"));
  const json faults = json::parse(read_text(example / "faults/expected.json"));

  // One replay directory: cheats, faults, then the control (sorted by name).
  const fs::path replay = dir / "replay";
  fs::create_directories(replay);
  for (const auto& [folder, expected] : {std::pair{"cheats", &cheats}, std::pair{"faults", &faults}})
    for (const auto& [name, entry] : expected->items())
      fs::copy_file(example / folder / name, replay / name);
  fs::copy_file(example / "replay/transpose/01-shared-tile.cu", replay / "zz-control-shared-tile.cu");

  // The evaluator's own defenses are under test, so the project's tests step aside
  // (`true`): faults then surface in the benchmark, as crashed or timeout.
  json config = json::parse(read_text(example / ".maxcode.json"));
  config["test"] = {{"command", "true"}};
  config["benchmarks"][0]["timeout_s"] = 30;
  config["search"] = {{"policy", "replay"}, {"max_evaluations", 40}, {"batch", 6}, {"critic", "metrics"}};
  config["gpu"] = {{"sanitizer", json::array()}, {"ncu", true}};
  testing::write_file(dir / "config.json", config.dump(2));

  Command cmd;
  cmd.shell = shell_quote(testing::maxcode_binary().string()) + " optimize " + example.string() + " --config " +
              (dir / "config.json").string() + " --replay-dir " + replay.string() + " --out " +
              (dir / "out").string();
  cmd.timeout_s = 1500;
  Outcome o = run(cmd);
  ASSERT_EQ(o.exit_code, 0) << o.tail(6000);
  const json result = json::parse(read_text(dir / "out/result.json"));

  std::map<std::string, json> by_id;
  for (const json& c : result.at("candidates")) by_id[c.at("id").get<std::string>()] = c;
  for (const auto& [expected, label] : {std::pair{&cheats, "cheat"}, std::pair{&faults, "fault"}}) {
    for (const auto& [name, want] : expected->items()) {
      ASSERT_TRUE(by_id.count(name)) << name << " was not evaluated";
      const json& got = by_id[name];
      const std::string verdict = got.at("verdict"), reason = got.at("reason");
      std::printf("%-6s %-26s %-12s %s\n", label, name.c_str(), verdict.c_str(), reason.substr(0, 150).c_str());
      EXPECT_EQ(verdict, want.at("verdict").get<std::string>()) << name << ": " << reason;
      EXPECT_NE(reason.find(want.at("reason").get<std::string>()), std::string::npos)
          << name << ": expected the reason to say '" << want.at("reason").get<std::string>() << "', got: " << reason;
    }
  }
  // After every fault the GPU still works: the control wins and is confirmed.
  ASSERT_TRUE(result.at("winner").is_object()) << result.dump(2).substr(0, 4000);
  EXPECT_EQ(result["winner"].at("id"), "zz-control-shared-tile.cu");
  // The out-of-process witness saw the control's work as CUPTI did (gpu.witness is on by
  // default): same launches, kernel time and speedup within the tolerance.
  const json& witness = result["winner"].value("witness", json::object());
  EXPECT_EQ(witness.value("status", ""), "agrees") << witness.dump(2);
  if (witness.contains("original"))
    std::printf("witness: ncu %.3fx vs claimed %.3fx; original ncu %s launches %.3f ms / CUPTI %s, %.3f ms; "
                "winner ncu %s launches %.3f ms / CUPTI %s, %.3f ms\n",
                witness.value("witness_speedup", 0.0), witness.value("claimed_speedup", 0.0),
                witness["original"]["ncu_launches"].dump().c_str(), witness["original"].value("ncu_ns", 0.0) * 1e-6,
                witness["original"]["cupti_launches"].dump().c_str(), witness["original"].value("cupti_ns", 0.0) * 1e-6,
                witness["candidate"]["ncu_launches"].dump().c_str(), witness["candidate"].value("ncu_ns", 0.0) * 1e-6,
                witness["candidate"]["cupti_launches"].dump().c_str(), witness["candidate"].value("cupti_ns", 0.0) * 1e-6);
  // The A/A run of the original on this GPU: not significant, interval around 1.
  const json& noise = result.at("noise");
  EXPECT_FALSE(noise.at("significant").get<bool>());
  EXPECT_LE(noise["speedup"].at("low").get<double>(), 1.0);
  EXPECT_GE(noise["speedup"].at("high").get<double>(), 1.0);
  std::printf("A/A: %.4fx [%.4f, %.4f]\n", noise["speedup"]["median"].get<double>(),
              noise["speedup"]["low"].get<double>(), noise["speedup"]["high"].get<double>());
  if (const char* keep = std::getenv("MAXCODE_GPU_TEST_OUT")) {
    fs::create_directories(fs::path(keep) / "cheat-suite");
    for (const char* file : {"result.json", "report.md"})
      fs::copy_file(dir / "out" / file, fs::path(keep) / "cheat-suite" / file, fs::copy_options::overwrite_existing);
  }
}

}  // namespace
}  // namespace maxcode

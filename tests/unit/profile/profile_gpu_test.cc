// The GPU side without a GPU: the aggregation the CUPTI injection runs on activity
// records, recorded per-process files parsed and ranked, kernels mapped back to their
// definitions, and the CPU-/launch-/GPU-bound verdict.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "runner/util/files.h"
#include "runner/util/process.h"
#include "runner/profile/bound.h"
#include "runner/profile/collect.h"
#include "runner/evaluate/gpu/record_socket.h"
#include "runner/instrument/gpu_activity.h"
#include "runner/instrument/inject_paths.h"
#include "runner/profile/rank_gpu.h"
#include "runner/profile/select.h"
#include "runner/profile/table.h"
#include "runner/workspace/source_extent.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

using testing::source_path;
using testing::TempDir;

KernelLaunch launch(const std::string& name, int grid, std::uint64_t start, std::uint64_t end,
                    std::uint32_t stream = 7) {
  KernelLaunch k;
  k.name = name;
  k.grid = {grid, 1, 1};
  k.block = {256, 1, 1};
  k.registers = 32;
  k.static_smem = 1024;
  k.dynamic_smem = 0;
  k.stream = stream;
  k.start_ns = start;
  k.end_ns = end;
  return k;
}

GpuSummary fixture(const std::string& name) {
  const auto path = source_path("tests/fixtures/profile/" + name);
  return parse_gpu_summary(nlohmann::json::parse(read_text(path)), path.string());
}

const ProfileEntry* find(const std::vector<ProfileEntry>& entries, const std::string& function) {
  auto it = std::find_if(entries.begin(), entries.end(), [&](const ProfileEntry& e) { return e.function == function; });
  return it == entries.end() ? nullptr : &*it;
}

TEST(GpuActivity, SumsLaunchesPerKernelAndShape) {
  GpuActivity a;
  a.add_kernel(launch("_Z5saxpyifPKfPf", 64, 1000, 3000, 7));
  a.add_kernel(launch("_Z5saxpyifPKfPf", 64, 2000, 7000, 9));  // another stream, overlapping
  a.add_kernel(launch("_Z5saxpyifPKfPf", 128, 10000, 11000));
  a.add_transfer("HtoD", 4096, 20000, 24000);
  a.add_transfer("memset", 64, 30000, 30500);
  a.add_dropped(3);
  a.add_message("x");
  a.add_message("x");  // kept once
  GpuSummary s = a.summary(42, "/bin/app", true);
  ASSERT_EQ(s.kernels.size(), 2u);
  const KernelStats& big = s.kernels[0];  // sorted by total time
  EXPECT_EQ(big.grid[0], 64);
  EXPECT_EQ(big.launches, 2u);
  EXPECT_EQ(big.total_ns, 7000u);
  EXPECT_EQ(big.min_ns, 2000u);
  EXPECT_EQ(big.max_ns, 5000u);
  EXPECT_EQ(big.registers, 32);
  EXPECT_EQ(big.static_smem, 1024);
  EXPECT_EQ(big.streams, (std::vector<std::uint32_t>{7, 9}));
  EXPECT_EQ(s.kernel_ns(), 8000u);
  EXPECT_EQ(s.transfer_ns(), 4500u);
  // Busy time is the union: [1000, 7000) + [10000, 11000) + copies, not the sum.
  EXPECT_EQ(s.busy_ns, 6000u + 1000u + 4000u + 500u);
  EXPECT_EQ(s.first_ns, 1000u);
  EXPECT_EQ(s.last_ns, 30500u);
  EXPECT_EQ(s.dropped, 3u);
  EXPECT_EQ(s.messages.size(), 1u);

  // What the injection writes is what the engine reads.
  GpuSummary back = parse_gpu_summary(to_json(s), "gpu.json");
  EXPECT_EQ(to_json(back), to_json(s));
}

TEST(GpuActivity, AFileWithMissingOrMistypedFieldsIsAnError) {
  nlohmann::json doc = to_json(GpuActivity().summary(1, "x", true));
  nlohmann::json missing = doc;
  missing.erase("busy_ns");
  EXPECT_THROW(
      {
        try {
          parse_gpu_summary(missing, "gpu-1.json");
        } catch (const std::runtime_error& e) {
          EXPECT_STREQ(e.what(), "gpu-1.json: busy_ns: missing required field");
          throw;
        }
      },
      std::runtime_error);
  nlohmann::json bad = to_json(fixture("gpu-multistream.json"));
  bad["kernels"][2]["grid"] = {1, 2};
  try {
    parse_gpu_summary(bad, "gpu-2.json");
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "gpu-2.json: kernels[2].grid: expected three integers");
  }
  nlohmann::json other = doc;
  other["format"] = "something/1";
  EXPECT_THROW(parse_gpu_summary(other, "x.json"), std::runtime_error);
}

TEST(GpuActivity, DriverCallCountsRoundTripAndOlderFilesReadAsUncounted) {
  GpuActivity a;
  a.add_kernel(launch("_Z4realPf", 64, 1000, 2000));
  KernelLaunch graph_kernel = launch("_Z4realPf", 64, 3000, 4000);
  graph_kernel.from_graph = true;  // no launch call of its own
  a.add_kernel(graph_kernel);
  GpuSummary s = a.summary(42, "/bin/app", true);
  EXPECT_EQ(s.api.launch_records, 1u);
  s.ppid = 7;
  s.api.counted = true;
  s.api.launches = 3;
  s.api.graph_launches = 1;
  s.api.contexts_created = 1;
  s.api.ipc["cuIpcGetMemHandle"] = 2;
  EXPECT_EQ(s.api.unrecorded_launches(), 2u);
  EXPECT_EQ(s.api.ipc_calls(), 2u);
  const GpuSummary back = parse_gpu_summary(to_json(s), "gpu.json");
  EXPECT_EQ(back.ppid, 7);
  EXPECT_TRUE(back.api.counted);
  EXPECT_EQ(back.api.launches, 3u);
  EXPECT_EQ(back.api.launch_records, 1u);
  EXPECT_EQ(back.api.graph_launches, 1u);
  EXPECT_EQ(back.api.contexts_created, 1u);
  EXPECT_EQ(back.api.ipc, (std::map<std::string, std::uint64_t>{{"cuIpcGetMemHandle", 2}}));

  // A file of an older injection: no counts, not counted, and no error.
  nlohmann::json old = to_json(s);
  old.erase("api");
  old.erase("ppid");
  const GpuSummary older = parse_gpu_summary(old, "gpu-old.json");
  EXPECT_FALSE(older.api.counted);
  EXPECT_EQ(older.api.launches, 0u);
  EXPECT_EQ(older.ppid, 0);

  nlohmann::json bad = to_json(s);
  bad["api"]["ipc"]["cuIpcOpenMemHandle"] = "once";
  try {
    parse_gpu_summary(bad, "gpu-3.json");
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "gpu-3.json: api.ipc.cuIpcOpenMemHandle: expected an integer, got a string");
  }
}

// The file is written inside the program it watches, which may be hostile: a count that
// is negative or fractional is an error naming it, never read as a huge unsigned number.
TEST(GpuActivity, ACountThatIsNotAWholeNumberInRangeIsAnError) {
  const nlohmann::json good = to_json(fixture("gpu-multistream.json"));
  const std::vector<std::pair<nlohmann::json::json_pointer, nlohmann::json>> cases{
      {nlohmann::json::json_pointer("/kernels/0/launches"), -1},
      {nlohmann::json::json_pointer("/kernels/1/total_ns"), 2.5},
      {nlohmann::json::json_pointer("/busy_ns"), -5},
      {nlohmann::json::json_pointer("/kernels/0/streams/0"), -7},
  };
  const std::vector<std::string> want{
      "gpu-4.json: kernels[0].launches: must be >= 0, got -1",
      "gpu-4.json: kernels[1].total_ns: expected an integer, got 2.5",
      "gpu-4.json: busy_ns: must be >= 0, got -5",
      "gpu-4.json: kernels[0].streams[0]: must be >= 0, got -7",
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    nlohmann::json bad = good;
    bad[cases[i].first] = cases[i].second;
    try {
      parse_gpu_summary(bad, "gpu-4.json");
      ADD_FAILURE() << "no error for " << cases[i].first.to_string();
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), want[i]);
    }
  }
}

TEST(GpuRanking, RecordedMultiStreamRunMapsKernelsToTheirDefinitions) {
  CodeOrigin origin({source_path("tests/fixtures/profile/cuda-repo")}, ScopeConfig{{"src/**"}, {}});
  SourceIndex sources(source_path("tests/fixtures/profile/cuda-repo"));
  std::vector<ProfileEntry> entries = rank_gpu({fixture("gpu-multistream.json")}, origin, &sources);
  ASSERT_EQ(entries.size(), 5u);  // reduce_sum's two grid sizes are one kernel
  EXPECT_EQ(entries[0].function, "stencil::blur");
  EXPECT_EQ(entries[0].name, "stencil::blur(float const*, float*, int, int)");
  EXPECT_EQ(entries[0].file, "src/kernels.cu");
  EXPECT_EQ(entries[0].line, 25);
  EXPECT_EQ(entries[0].calls, 100u);
  EXPECT_TRUE(entries[0].in_scope);
  EXPECT_FALSE(entries[0].external);

  const ProfileEntry* saxpy = find(entries, "saxpy");
  ASSERT_NE(saxpy, nullptr);
  EXPECT_EQ(saxpy->line, 5);
  EXPECT_DOUBLE_EQ(saxpy->self, 200e6);
  const ProfileEntry* reduce = find(entries, "reduce_sum");
  ASSERT_NE(reduce, nullptr);
  EXPECT_EQ(reduce->file, "src/kernels.cu");
  EXPECT_EQ(reduce->line, 10);  // the template header starts the definition
  EXPECT_EQ(reduce->calls, 150u);
  EXPECT_DOUBLE_EQ(reduce->self, 175e6);
  ASSERT_EQ(reduce->shapes.size(), 2u);
  EXPECT_EQ(reduce->shapes[0].grid[0], 4096);
  EXPECT_EQ(reduce->shapes[0].static_smem, 1024);

  // Library kernels: cuBLAS (found nowhere) and CUTLASS (by name) are external.
  const ProfileEntry* cutlass = find(entries, "cutlass::Kernel");
  ASSERT_NE(cutlass, nullptr);
  EXPECT_TRUE(cutlass->external);
  auto cublas = std::find_if(entries.begin(), entries.end(),
                             [](const ProfileEntry& e) { return e.name.find("cublas") != std::string::npos; });
  ASSERT_NE(cublas, entries.end());
  EXPECT_TRUE(cublas->external);
  EXPECT_FALSE(cublas->in_scope);
}

TEST(GpuRanking, SharesCountCopiesInTheTotal) {
  Collected c;
  c.gpu.push_back(fixture("gpu-multistream.json"));
  Profile p = rank_profile(c, CodeOrigin({source_path("tests/fixtures/profile/cuda-repo")}, ScopeConfig{}));
  EXPECT_DOUBLE_EQ(p.gpu_total, 850e6 + 25.03e6);
  EXPECT_DOUBLE_EQ(p.cpu_total, 0);
  EXPECT_NEAR(p.kernels[0].share, 400e6 / (850e6 + 25.03e6), 1e-12);
}

// CPU stacks of a host that spends its time in the driver (ioctl) and libc while it
// feeds the GPU: `seconds` of external time, and a little in the launcher.
CallStacks busy_host(double seconds) {
  CallStacks cs;
  CodeFrame ioctl;
  ioctl.function = "ioctl";
  ioctl.module = "/usr/lib/x86_64-linux-gnu/libc.so.6";
  CodeFrame memcpy_frame;
  memcpy_frame.function = "__memmove_avx_unaligned_erms";
  memcpy_frame.module = ioctl.module;
  CodeFrame launcher;
  launcher.function = "run_pipeline(float const*, float*, int, int)";
  launcher.module = source_path("tests/fixtures/profile/cuda-repo/bench").string();
  launcher.decl_file = source_path("tests/fixtures/profile/cuda-repo/src/kernels.cu").string();
  launcher.decl_line = 38;
  const std::uint32_t i = cs.intern(ioctl), m = cs.intern(memcpy_frame), l = cs.intern(launcher);
  cs.stacks.push_back({seconds * 0.7e9, 700, {i, l}});
  cs.stacks.push_back({seconds * 0.3e9, 300, {m, l}});
  cs.stacks.push_back({0.02e9, 2, {l}});
  return cs;
}

TEST(GpuRanking, AKernelFedSlowlyLeadsTheKernelsListWithItsLauncher) {
  Collected c;
  c.gpu.push_back(fixture("gpu-multistream.json"));
  c.cpu = busy_host(5.0);  // the host is busy 6x longer than the GPU
  c.have_cpu = true;
  const auto repo = source_path("tests/fixtures/profile/cuda-repo");
  Profile p = rank_profile(c, CodeOrigin({repo}, ScopeConfig{{"src/**"}, {}}));
  // Two lists: the driver and libc lead the CPU list, the kernel leads its own.
  ASSERT_FALSE(p.functions.empty());
  EXPECT_EQ(p.functions[0].function, "ioctl");
  EXPECT_TRUE(p.functions[0].external);
  ASSERT_FALSE(p.kernels.empty());
  const ProfileEntry& blur = p.kernels[0];
  EXPECT_EQ(blur.function, "stencil::blur");
  EXPECT_NEAR(blur.share, 400e6 / (850e6 + 25.03e6), 1e-12);  // of GPU time, not of GPU + CPU
  ASSERT_EQ(blur.launchers.size(), 1u);
  EXPECT_EQ(blur.launchers[0].function, "run_pipeline");
  EXPECT_EQ(blur.launchers[0].file, "src/kernels.cu");
  EXPECT_EQ(blur.launchers[0].line, 40);
  const ProfileEntry* saxpy = find(p.kernels, "saxpy");
  ASSERT_NE(saxpy, nullptr);
  EXPECT_EQ(saxpy->launchers.size(), 2u);
  const ProfileEntry* reduce = find(p.kernels, "reduce_sum");
  ASSERT_NE(reduce, nullptr);
  ASSERT_EQ(reduce->launchers.size(), 1u);
  EXPECT_EQ(reduce->launchers[0].function, "run_reduce");  // through cudaLaunchKernel

  const std::string table = render_profile_table(p, 10, 0.0);
  EXPECT_NE(table.find("GPU kernels, by share of GPU time"), std::string::npos) << table;
  EXPECT_LT(table.find("GPU kernels"), table.find("CPU functions")) << table;
  EXPECT_NE(table.find("launched by run_pipeline"), std::string::npos) << table;
  EXPECT_NE(table.find("launched by run_saxpy, run_saxpy_scaled"), std::string::npos) << table;
  // A launcher in another file says where.
  p.kernels[0].launchers[0].file = "src/main.cu";
  EXPECT_NE(render_profile_table(p, 10, 0.0).find("launched by run_pipeline (src/main.cu)"), std::string::npos);
  p.kernels[0].launchers[0].file = "src/kernels.cu";
  std::printf("%s", table.c_str());

  // With no function named, the kernel's launcher is the target: the kernel's share of
  // GPU time beats every in-scope CPU function's share of CPU time.
  const std::vector<ProfileEntry> picked = select_targets(p, 5, kDefaultTargetShare);
  ASSERT_FALSE(picked.empty());
  EXPECT_EQ(picked[0].function, "stencil::blur");
  const TargetChoice choice = resolve_target(repo, ScopeConfig{{"src/**"}, {}}, picked[0]);
  EXPECT_EQ(choice.function, "run_pipeline");
  EXPECT_EQ(choice.file, "src/kernels.cu");
  EXPECT_NE(choice.note.find("launcher of stencil::blur"), std::string::npos) << choice.note;
  // targets.prefer = "cpu" puts the CPU list first (here only with no share threshold:
  // the launcher's own CPU time is 0.4%); "gpu", or unset, the kernels.
  EXPECT_EQ(select_targets(p, 5, 0.0, "cpu")[0].function, "run_pipeline");
  EXPECT_EQ(select_targets(p, 5, 0.0, "gpu")[0].function, "stencil::blur");
  EXPECT_EQ(select_targets(p, 5, 0.0)[0].function, "stencil::blur");

  // saxpy has two launchers: a clear message naming them and what to set.
  try {
    resolve_target(repo, ScopeConfig{{"src/**"}, {}}, *saxpy);
    ADD_FAILURE() << "no error";
  } catch (const SourceError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("launched from 2 host functions"), std::string::npos) << m;
    EXPECT_NE(m.find("run_saxpy (src/kernels.cu:43)"), std::string::npos) << m;
    EXPECT_NE(m.find("run_saxpy_scaled (src/kernels.cu:46)"), std::string::npos) << m;
    EXPECT_NE(m.find("targets.functions"), std::string::npos) << m;
  }
  // Out of scope: the launcher's file is excluded.
  try {
    resolve_target(repo, ScopeConfig{{"src/**"}, {"src/kernels.cu"}}, blur);
    ADD_FAILURE() << "no error";
  } catch (const SourceError& e) {
    EXPECT_NE(std::string(e.what()).find("outside the configured scope"), std::string::npos) << e.what();
  }
}

TEST(GpuRanking, ProfileJsonRoundTripsAndUnknownFormatsAreRejected) {
  Collected c;
  c.gpu.push_back(fixture("gpu-multistream.json"));
  Profile p = rank_profile(c, CodeOrigin({source_path("tests/fixtures/profile/cuda-repo")}, ScopeConfig{{"src/**"}, {}}));
  const nlohmann::json doc = to_json(p);
  EXPECT_EQ(doc["format"], "maxcode-profile/2");
  ASSERT_TRUE(doc["kernels"].is_array());
  EXPECT_EQ(doc["kernels"][0]["launchers"][0]["function"], "run_pipeline");
  const Profile back = profile_from_json(doc, "profile.json");
  ASSERT_EQ(back.kernels.size(), p.kernels.size());
  EXPECT_EQ(back.kernels[0].launchers[0].function, "run_pipeline");
  EXPECT_DOUBLE_EQ(back.kernels[0].share, p.kernels[0].share);

  // The old format: one mixed list, split by kind with shares of each list's total.
  nlohmann::json old = {{"format", "maxcode-profile/1"}, {"unit", "ns"}, {"cpu_total", 300.0}, {"gpu_total", 100.0},
                        {"entries", {{{"kind", "cpu"}, {"name", "f"}, {"function", "f"}, {"self", 150.0}},
                                     {{"kind", "gpu"}, {"name", "k"}, {"function", "k"}, {"self", 50.0}}}}};
  const Profile v1 = profile_from_json(old, "old.json");
  ASSERT_EQ(v1.functions.size(), 1u);
  ASSERT_EQ(v1.kernels.size(), 1u);
  EXPECT_DOUBLE_EQ(v1.functions[0].share, 0.5);
  EXPECT_DOUBLE_EQ(v1.kernels[0].share, 0.5);

  nlohmann::json future = doc;
  future["format"] = "maxcode-profile/9";
  try {
    profile_from_json(future, "out/profile.json");
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(),
                 "out/profile.json: format 'maxcode-profile/9' is not a profile this maxcode reads (it reads "
                 "maxcode-profile/2 and maxcode-profile/1); write it again with this version's maxcode profile");
  }

  // A profile someone edited: the field is named, as in every other document maxcode reads.
  nlohmann::json edited = doc;
  edited["kernels"][0]["launchers"][0]["line"] = "forty";
  try {
    profile_from_json(edited, "out/profile.json");
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "out/profile.json: kernels[0].launchers[0].line: expected an integer, got a string");
  }
  // Fields another version wrote, and nulls, are left alone.
  edited = doc;
  edited["kernels"][0]["from_a_later_version"] = 1;
  edited["kernels"][0]["launch_note"] = nullptr;
  EXPECT_EQ(profile_from_json(edited, "out/profile.json").kernels.size(), p.kernels.size());
}

TEST(Boundness, NamesWhatLimitsTheProgram) {
  const Boundness gpu = classify_boundness(1.0, 0.9, 0.88, 565, 0.85, true);
  EXPECT_EQ(gpu.kind, "gpu-bound");
  EXPECT_NE(gpu.reason.find("GPU busy 98%"), std::string::npos) << gpu.reason;
  // CUDA's start-up before the first kernel does not hide a busy GPU.
  EXPECT_EQ(classify_boundness(3.0, 0.9, 0.88, 565, 0.85, true).kind, "gpu-bound");
  const Boundness launches = classify_boundness(0.5, 0.45, 0.06, 20000, 0.06, true);
  EXPECT_EQ(launches.kind, "launch-bound");
  EXPECT_NE(launches.reason.find("3.0 us"), std::string::npos);
  EXPECT_EQ(classify_boundness(2.0, 1.9, 0.2, 40, 0.2, true).kind, "cpu-bound");
  EXPECT_EQ(classify_boundness(2.0, 0, 0, 0, 0, false).kind, "cpu-only");
}

TEST(GpuRunDirectory, SnapshotsDroppedRecordsAndCuptiErrorsAreReported) {
  TempDir dir;
  write_text(dir / "gpu-777-1.json", read_text(source_path("tests/fixtures/profile/gpu-launch-bound.json")));
  write_text(dir / "gpu-777-1.json.tmp", "{ half a snapshot");  // never read
  Collected c;
  BenchmarkRun run;
  collect_run_directory(dir.path(), c, run);
  EXPECT_EQ(run.gpu_processes, 1);
  EXPECT_EQ(run.kernel_launches, 20000u);
  EXPECT_EQ(run.gpu_dropped, 12u);
  EXPECT_TRUE(run.partial);
  EXPECT_DOUBLE_EQ(run.gpu_busy_s, 0.06);
  EXPECT_NEAR(run.gpu_window_s, 0.449995, 1e-9);
  bool snapshot = false, cupti = false;
  for (const auto& w : c.warnings) {
    snapshot |= w.find("last snapshot") != std::string::npos;
    cupti |= w.find("CUPTI: cuptiActivityFlushPeriod") != std::string::npos;
  }
  EXPECT_TRUE(snapshot);
  EXPECT_TRUE(cupti);

  // A broken file is a warning naming it, and the rest still counts.
  write_text(dir / "gpu-9-2.json", "{\"format\": \"maxcode-gpu/1\"}");
  Collected again;
  BenchmarkRun second;
  collect_run_directory(dir.path(), again, second);
  EXPECT_EQ(second.gpu_processes, 1);
  ASSERT_FALSE(again.warnings.empty());
  EXPECT_NE(again.warnings.back().find("gpu-9-2.json: pid: missing"), std::string::npos);
}

TEST(CuptiInjection, WithoutAGpuItDegradesWritesOnceAndNeverBreaksTheProgram) {
  const auto library = find_inject_libraries().cupti;
  if (library.empty()) GTEST_SKIP() << "built without CUPTI";
  TempDir dir;
  Command build;
  build.shell = "cc -o " + (dir / "host").string() + " " +
                source_path("tests/fixtures/profile/programs/inject_host.c").string() + " -ldl";
  ASSERT_TRUE(run(build).ok());
  std::filesystem::create_directories(dir / "profiles");
  Command c;
  c.shell = (dir / "host").string() + " " + library.string();
  c.env = {{"MAXCODE_PROFILE_DIR", (dir / "profiles").string()}};
  Outcome o = run(c);
  EXPECT_TRUE(o.ok()) << o.describe() << "\n" << o.tail();
  EXPECT_NE(o.out.find("InitializeInjection -> 1"), std::string::npos);
  Collected collected;
  BenchmarkRun r;
  collect_run_directory(dir / "profiles", collected, r);
  EXPECT_EQ(r.gpu_processes, 1);  // the parent's; the forked child wrote none
  ASSERT_EQ(collected.gpu.size(), 1u);
  EXPECT_TRUE(collected.gpu[0].complete);
  EXPECT_TRUE(collected.gpu[0].kernels.empty());
  // Where a GPU is missing, CUPTI says so; where one is present, nothing is wrong.
  if (!collected.gpu[0].messages.empty()) EXPECT_NE(o.err.find("maxcode cupti: "), std::string::npos);
}

TEST(CuptiInjection, WithASocketItReportsThereOnceAndWritesNoFile) {
  const auto library = find_inject_libraries().cupti;
  if (library.empty()) GTEST_SKIP() << "built without CUPTI";
  TempDir dir;
  Command build;
  build.shell = "cc -o " + (dir / "host").string() + " " +
                source_path("tests/fixtures/profile/programs/inject_host.c").string() + " -ldl";
  ASSERT_TRUE(run(build).ok());
  RecordSocket socket;
  Command c;
  c.shell = (dir / "host").string() + " " + library.string();
  c.env = {{"MAXCODE_PROFILE_SOCKET", socket.path()}};
  c.cwd = dir.path().string();
  Outcome o = run(c);
  EXPECT_TRUE(o.ok()) << o.describe() << "\n" << o.tail();
  const RecordStreams streams = socket.finish();
  EXPECT_TRUE(streams.problems.empty()) << streams.problems.front();
  // The parent's final summary; the forked child closed its copy of the connection.
  ASSERT_EQ(streams.summaries.size(), 1u);
  EXPECT_TRUE(streams.summaries[0].complete);
  EXPECT_GT(streams.summaries[0].ppid, 0);
  EXPECT_FALSE(std::filesystem::exists(dir / "gpu"));
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    EXPECT_EQ(entry.path().extension(), "") << entry.path();  // no gpu-*.json beside
}

}  // namespace
}  // namespace maxcode

// parse_gpu_summary (gpu_activity.h): the engine's side of the GPU activity file, apart
// from the summary's writer, which the CUPTI injection library compiles into itself
// (runner/inject/CMakeLists.txt) and which needs none of this.
//
// The file is read as every strict document is (runner/util/json_reader.h), so that a
// forged or torn file is an error naming the field: counts are whole and in range (a
// count of -1 is not read as 2^64 - 1). It is maxcode's own file, so fields it does not
// know are left alone (an open object), and those older versions did not write are
// optional.
#include <array>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "runner/instrument/gpu_activity.h"
#include "runner/util/json_reader.h"

namespace maxcode {

namespace {

std::uint64_t count(const JsonObject& object, std::string_view key) {
  return object.require(key).integer<std::uint64_t>(0);
}

std::array<int, 3> dim3(const JsonNode& node) {
  if (!node.value().is_array() || node.value().size() != 3) node.fail("expected three integers");
  return {node.element(0).integer<int>(0), node.element(1).integer<int>(0), node.element(2).integer<int>(0)};
}

KernelStats read_kernel(const JsonNode& node) {
  const JsonObject k = JsonObject::open(node);
  KernelStats ks;
  ks.name = k.require("name").string();
  ks.grid = dim3(k.require("grid"));
  ks.block = dim3(k.require("block"));
  ks.device = k.integer<std::uint32_t>("device", 0, 0);
  ks.launches = count(k, "launches");
  ks.total_ns = count(k, "total_ns");
  ks.min_ns = count(k, "min_ns");
  ks.max_ns = count(k, "max_ns");
  if (k.has("first_launch_ns")) {  // files of older versions lack them
    ks.first_start_ns = count(k, "first_start_ns");
    ks.first_launch_ns = count(k, "first_launch_ns");
  }
  ks.registers = k.require("registers").integer<int>(0);
  ks.static_smem = k.require("static_smem").integer<int>(0);
  ks.dynamic_smem = k.require("dynamic_smem").integer<int>(0);
  for (const JsonNode& id : k.elements("streams")) ks.streams.push_back(id.integer<std::uint32_t>(0));
  if (ks.launches == 0) k.fail("launches", "must be at least 1");
  return ks;
}

TransferStats read_transfer(const JsonNode& node) {
  const JsonObject t = JsonObject::open(node);
  TransferStats out;
  out.kind = t.require("kind").string();
  out.count = count(t, "count");
  out.bytes = count(t, "bytes");
  out.total_ns = count(t, "total_ns");
  return out;
}

ApiCalls read_api(const JsonNode& node) {
  const JsonObject api = JsonObject::open(node);
  ApiCalls out;
  out.counted = api.require("counted").boolean();
  out.launches = count(api, "launches");
  out.launch_records = count(api, "launch_records");
  out.graph_launches = count(api, "graph_launches");
  out.contexts_created = count(api, "contexts_created");
  const JsonObject ipc = JsonObject::open(api.require("ipc"));
  for (const auto& [name, n] : ipc.members()) out.ipc[name] = n.integer<std::uint64_t>(0);
  return out;
}

}  // namespace

GpuSummary parse_gpu_summary(const nlohmann::json& document, const std::string& label) {
  const JsonObject d = JsonObject::open(JsonNode(document, label, raise_as<std::runtime_error>));
  if (d.require("format").string() != kGpuSummaryFormat)
    d.fail("format", "expected \"" + std::string(kGpuSummaryFormat) + "\"");
  GpuSummary s;
  s.pid = d.require("pid").integer<long>(0);
  s.ppid = d.integer<long>("ppid", 0, 0);
  s.exe = d.require("exe").string();
  s.complete = d.require("complete").boolean();
  s.first_ns = count(d, "first_ns");
  s.last_ns = count(d, "last_ns");
  s.busy_ns = count(d, "busy_ns");
  s.busy_exact = d.boolean("busy_exact", s.busy_exact);
  s.dropped = count(d, "dropped");
  for (const JsonNode& k : d.require("kernels").elements()) s.kernels.push_back(read_kernel(k));
  for (const JsonNode& t : d.require("transfers").elements()) s.transfers.push_back(read_transfer(t));
  if (const auto api = d.get("api")) s.api = read_api(*api);  // older files lack the counts: all zero, not counted
  if (const auto messages = d.get("messages")) {              // the injection's own notes; what is not text is left out
    messages->expect(messages->value().is_array(), "an array");
    for (const nlohmann::json& m : messages->value())
      if (m.is_string()) s.messages.push_back(m.get<std::string>());
  }
  return s;
}

}  // namespace maxcode

// parse_gpu_summary (gpu_activity.h): the engine's side of the GPU activity file, apart
// from the summary's writer, which the CUPTI injection library compiles into itself
// (runner/inject/CMakeLists.txt) and which needs none of this.
#include <array>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "runner/instrument/gpu_activity.h"
#include "runner/util/json_reader.h"

namespace maxcode {

namespace {

// The file is read as every strict document is (runner/util/json_reader.h), so that a
// forged or torn file is an error naming the field: numbers are whole and in range (a
// count of -1 is not read as 2^64 - 1). Fields it does not know are left alone.
JsonNode field(const JsonNode& object, std::string_view key) {
  object.expect(object.value().is_object(), "an object");
  if (!object.value().contains(key)) object.absent(key).fail("missing");
  return object.child(key);
}

std::uint64_t count(const JsonNode& object, std::string_view key) {
  return field(object, key).integer<std::uint64_t>(0);
}

std::array<int, 3> dim3(const JsonNode& node) {
  const nlohmann::json& v = node.value();
  if (!v.is_array() || v.size() != 3) node.fail("expected three integers");
  return {node.element(0).integer<int>(0), node.element(1).integer<int>(0), node.element(2).integer<int>(0)};
}

KernelStats read_kernel(const JsonNode& k) {
  KernelStats ks;
  ks.name = field(k, "name").string();
  ks.grid = dim3(field(k, "grid"));
  ks.block = dim3(field(k, "block"));
  ks.device = k.value().contains("device") ? field(k, "device").integer<std::uint32_t>(0) : 0;
  ks.launches = count(k, "launches");
  ks.total_ns = count(k, "total_ns");
  ks.min_ns = count(k, "min_ns");
  ks.max_ns = count(k, "max_ns");
  if (k.value().contains("first_launch_ns")) {  // files of older versions lack them
    ks.first_start_ns = count(k, "first_start_ns");
    ks.first_launch_ns = count(k, "first_launch_ns");
  }
  ks.registers = field(k, "registers").integer<int>(0);
  ks.static_smem = field(k, "static_smem").integer<int>(0);
  ks.dynamic_smem = field(k, "dynamic_smem").integer<int>(0);
  if (k.value().contains("streams")) {
    const JsonNode streams = field(k, "streams");
    streams.expect(streams.value().is_array(), "an array of stream ids");
    for (std::size_t i = 0; i < streams.value().size(); ++i)
      ks.streams.push_back(streams.element(i).integer<std::uint32_t>(0));
  }
  if (ks.launches == 0) field(k, "launches").fail("must be at least 1");
  return ks;
}

TransferStats read_transfer(const JsonNode& t) {
  TransferStats out;
  out.kind = field(t, "kind").string();
  out.count = count(t, "count");
  out.bytes = count(t, "bytes");
  out.total_ns = count(t, "total_ns");
  return out;
}

ApiCalls read_api(const JsonNode& api) {
  ApiCalls out;
  out.counted = field(api, "counted").boolean();
  out.launches = count(api, "launches");
  out.launch_records = count(api, "launch_records");
  out.graph_launches = count(api, "graph_launches");
  out.contexts_created = count(api, "contexts_created");
  const JsonNode ipc = field(api, "ipc");
  ipc.expect(ipc.value().is_object(), "an object of call counts");
  for (const auto& [name, n] : ipc.value().items()) out.ipc[name] = count(ipc, name);
  return out;
}

// An array field's elements, each read by `read`.
template <class Read>
auto read_each(const JsonNode& object, std::string_view key, Read read) {
  const JsonNode array = field(object, key);
  array.expect(array.value().is_array(), "an array");
  std::vector<decltype(read(array))> out;
  for (std::size_t i = 0; i < array.value().size(); ++i) out.push_back(read(array.element(i)));
  return out;
}

}  // namespace

GpuSummary parse_gpu_summary(const nlohmann::json& document, const std::string& label) {
  const JsonNode d(document, label, raise_as<std::runtime_error>);
  if (field(d, "format").string() != kGpuSummaryFormat)
    d.absent("format").fail("expected \"" + std::string(kGpuSummaryFormat) + "\"");
  GpuSummary s;
  s.pid = field(d, "pid").integer<long>(0);
  if (document.contains("ppid")) s.ppid = field(d, "ppid").integer<long>(0);
  s.exe = field(d, "exe").string();
  s.complete = field(d, "complete").boolean();
  s.first_ns = count(d, "first_ns");
  s.last_ns = count(d, "last_ns");
  s.busy_ns = count(d, "busy_ns");
  if (document.contains("busy_exact") && document["busy_exact"].is_boolean())
    s.busy_exact = document["busy_exact"].get<bool>();
  s.dropped = count(d, "dropped");
  s.kernels = read_each(d, "kernels", read_kernel);
  s.transfers = read_each(d, "transfers", read_transfer);
  if (document.contains("api"))
    s.api = read_api(field(d, "api"));  // older files lack the counts: all zero, not counted
  if (document.contains("messages")) {  // the injection's own notes; what is not text is left out
    const JsonNode messages = field(d, "messages");
    messages.expect(messages.value().is_array(), "an array");
    for (const nlohmann::json& m : messages.value())
      if (m.is_string()) s.messages.push_back(m.get<std::string>());
  }
  return s;
}

}  // namespace maxcode

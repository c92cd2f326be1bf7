#include "bot/protocol/run_status.h"

#include "runner/util/enum_names.h"

namespace maxcode::bot {

namespace {

constexpr EnumNames<RunStatus, 3> kNames{{
    {RunStatus::kFinished, "finished"},
    {RunStatus::kFailed, "failed"},
    {RunStatus::kCancelled, "cancelled"},
}};

}  // namespace

std::string run_status_name(RunStatus status) { return enum_name(kNames, status); }

std::optional<RunStatus> run_status_named(std::string_view name) { return enum_named(kNames, name); }

std::vector<std::string_view> run_status_names() { return enum_names_of(kNames); }

}  // namespace maxcode::bot

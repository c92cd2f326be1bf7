// The runner protocol's result status (bot/protocol/run_status.h): the names the worker
// sends and the service reads, the same on both sides; a name of none is refused.
#include "bot/protocol/run_status.h"

#include <gtest/gtest.h>

namespace maxcode::bot {
namespace {

TEST(RunStatus, TheWireNamesReadBack) {
  std::string names;
  for (std::string_view name : run_status_names()) {
    names += std::string(name) + "|";
    ASSERT_TRUE(run_status_named(name)) << name;
    EXPECT_EQ(run_status_name(*run_status_named(name)), name);
  }
  EXPECT_EQ(names, "finished|failed|cancelled|");  // docs/service.md "Runner protocol"
}

TEST(RunStatus, ANameOfNoneIsRefused) {
  for (std::string_view name : {"lost", "Finished", "", "finished "}) EXPECT_FALSE(run_status_named(name)) << name;
}

}  // namespace
}  // namespace maxcode::bot

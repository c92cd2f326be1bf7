// What `maxcode run` and `maxcode sweep` share at the edge: delivery through bot/
// (runner/ never includes bot/), credentials from the environment, SIGTERM as a stop.
#pragma once

#include <atomic>
#include <string>

#include "bot/delivery/deliver.h"
#include "runner/job/delivery.h"
#include "runner/job/job_input.h"

namespace maxcode::cli {

// Delivery through bot::deliver: a pull request, or a dry run that writes and prints
// the branch, title and body.
class BotDelivery : public Delivery {
 public:
  explicit BotDelivery(const DeliveryInput& input);
  PrRecord deliver(const std::filesystem::path& result_dir) override;

 private:
  DeliveryInput input_;
  bot::DeliverOptions options_;
  std::shared_ptr<bot::TokenSource> tokens_;
};

std::string env_value(const std::string& name);
// The variable the job names, else GITHUB_TOKEN, else GH_TOKEN; empty when none is set.
std::string git_token_from_env(const std::string& variable);
// Installs SIGTERM and SIGINT handlers that set the returned flag (once per process).
const std::atomic<bool>* stop_on_signals();

}  // namespace maxcode::cli

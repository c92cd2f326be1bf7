// What each table's class of the service's store (job_queue.h opens it and makes the
// schema) shares: the connections and the options, whose clock every row's time comes
// from.
#pragma once

#include <string>
#include <vector>

#include "bot/service/queue/queue_options.h"
#include "bot/service/queue/sql_pool.h"

namespace maxcode::bot::service {

struct StoreAccess {
  SqlPool& pool;
  const QueueOptions& options;
  double now() const { return options.now(); }
};

// Runner labels in one column: "gpu,sm90". Empty words are dropped when read.
std::string join_labels(const std::vector<std::string>& labels);
std::vector<std::string> split_labels(const std::string& text);

}  // namespace maxcode::bot::service

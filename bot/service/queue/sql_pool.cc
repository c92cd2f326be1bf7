#include "bot/service/queue/sql_pool.h"

namespace maxcode::bot::service {

SqlPool::SqlPool(std::unique_ptr<SqlDatabase> first, Opener open, int size)
    : open_(std::move(open)), size_(open_ ? std::max(1, size) : 1) {
  idle_.push_back(std::move(first));
}

SqlPool::Handle SqlPool::acquire() {
  std::unique_lock lock(mutex_);
  if (idle_.empty() && opened_ < size_) {
    ++opened_;
    lock.unlock();
    try {
      return Handle(*this, open_());
    } catch (...) {
      std::lock_guard again(mutex_);
      --opened_;
      throw;
    }
  }
  returned_.wait(lock, [&] { return !idle_.empty(); });
  auto db = std::move(idle_.back());
  idle_.pop_back();
  return Handle(*this, std::move(db));
}

void SqlPool::give_back(std::unique_ptr<SqlDatabase> db) {
  if (!db) return;
  {
    std::lock_guard lock(mutex_);
    idle_.push_back(std::move(db));
  }
  returned_.notify_one();
}

}  // namespace maxcode::bot::service

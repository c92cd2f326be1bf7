#include "support/postgres_server.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "bot/service/queue/sql_database.h"

namespace maxcode::testing {

namespace {

namespace fs = std::filesystem;

// Debian installs each major version's server programs here; the newest one found wins.
std::string find_bin() {
  std::string best;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    const fs::path bin = entry.path() / "bin";
    if (fs::exists(bin / "initdb") && fs::exists(bin / "pg_ctl") && bin.string() > best) best = bin.string();
  }
  return best;
}

std::string slurp(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void run_or_throw(const std::string& command, const fs::path& log, const std::string& what) {
  if (std::system((command + " >>" + log.string() + " 2>&1").c_str()) != 0)
    throw std::runtime_error("PostgreSQL test server: " + what + " failed (" + command + "):\n" + slurp(log));
}

}  // namespace

std::string PostgresServer::missing() {
  if (find_bin().empty()) return "PostgreSQL's server programs are not installed (/usr/lib/postgresql/*/bin/initdb; scripts/setup.sh installs them)";
  if (geteuid() == 0 && !getpwnam("postgres")) return "running as root and there is no 'postgres' user to run the server as";
  return "";
}

PostgresServer& PostgresServer::shared() {
  static std::unique_ptr<PostgresServer> server(new PostgresServer());
  return *server;
}

PostgresServer::PostgresServer() : bin_(find_bin()) {
  if (bin_.empty()) throw std::runtime_error(missing());
  char pattern[] = "/tmp/maxcode-pg-XXXXXX";
  if (!mkdtemp(pattern)) throw std::runtime_error("PostgreSQL test server: cannot make a temp dir");
  dir_ = pattern;
  if (geteuid() == 0) {
    // The server refuses root: it runs as `postgres`, which must own its dirs.
    const passwd* pg = getpwnam("postgres");
    if (!pg || chown(dir_.c_str(), pg->pw_uid, pg->pw_gid) != 0)
      throw std::runtime_error("PostgreSQL test server: cannot hand " + dir_ + " to the postgres user");
    as_postgres_ = "runuser -u postgres -- ";
  }
  const fs::path log = fs::path(dir_) / "setup.log";
  run_or_throw(as_postgres_ + bin_ + "/initdb -D " + dir_ + "/data -U postgres -A trust -E UTF8 --no-sync", log, "initdb");
  // Only the socket in our dir (no TCP port to collide with another test program);
  // fsync and friends off: a test's data need not survive a crash of the machine.
  run_or_throw(as_postgres_ + bin_ + "/pg_ctl -D " + dir_ + "/data -l " + dir_ + "/server.log -w -t 60 -o \"-k " + dir_ +
                   " -c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
                   " -c max_connections=300\" start",
               log, "pg_ctl start");
}

PostgresServer::~PostgresServer() {
  std::system((as_postgres_ + bin_ + "/pg_ctl -D " + dir_ + "/data -m immediate stop >/dev/null 2>&1").c_str());
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

std::string PostgresServer::url(const std::string& database) const {
  return "postgresql:///" + database + "?host=" + dir_ + "&user=postgres";
}

std::string PostgresServer::create_database() {
  const std::string name = "store" + std::to_string(++databases_);
  auto admin = bot::service::open_sql_database(url("postgres"), "", "test server");
  admin->exec("CREATE DATABASE " + name);
  return url(name);
}

}  // namespace maxcode::testing

#include "support/llm_server.h"

#include <openssl/evp.h>
#include <openssl/x509.h>
#include <signal.h>
#include <sys/socket.h>

#include <cstdlib>
#include <stdexcept>

#include "support/test_support.h"

namespace maxcode::testing {
namespace {

// A throwaway certificate for 127.0.0.1, signed by its own key: exactly what a client
// that verifies certificates must refuse.
std::unique_ptr<httplib::Server> make_tls_server() {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* cert = X509_new();
  if (!key || !cert) throw std::runtime_error("could not create a test key or certificate");
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), -60);
  X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("127.0.0.1"), -1, -1, 0);
  X509_set_issuer_name(cert, name);
  X509_sign(cert, key, EVP_sha256());
  // SSLServer takes its own references to both.
  auto server = std::make_unique<httplib::SSLServer>(cert, key);
  X509_free(cert);
  EVP_PKEY_free(key);
  if (!server->is_valid()) throw std::runtime_error("could not start a TLS test server");
  return server;
}

}  // namespace

std::string RecordedRequest::header(const std::string& name) const {
  auto found = headers.find(name);
  return found == headers.end() ? "" : found->second;
}

LlmServer::LlmServer(Tls tls) : tls_(tls == Tls::kSelfSigned) {
  // A client that gives up mid-reply must not kill the test program.
  signal(SIGPIPE, SIG_IGN);
  server_ = tls_ ? make_tls_server() : std::make_unique<httplib::Server>();
  server_->new_task_queue = [] { return new httplib::ThreadPool(16); };
  auto handler = [this](const httplib::Request& request, httplib::Response& response) {
    handle(request, response);
  };
  server_->Post(".*", handler);
  server_->Get(".*", handler);
  int listening = -1;
  server_->set_socket_options([&listening](socket_t sock) {
    int on = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    listening = sock;
  });
  port_ = server_->bind_to_any_port("127.0.0.1");
  if (port_ <= 0) throw std::runtime_error("could not bind a test server to 127.0.0.1");
  // cpp-httplib 0.11 listens with a backlog of 5: a burst of concurrent clients on a busy
  // machine overflows it, and the dropped connections come back a whole second later.
  ::listen(listening, 128);
  // Connections wait in the listen backlog until the loop below accepts them.
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // Server::stop() does nothing until the loop has started, so a test that ends at once
  // would leave it running and hang in the destructor's join.
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!server_->is_running() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

LlmServer::~LlmServer() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stopping_cv_.notify_all();
  server_->stop();
  thread_.join();
}

std::string LlmServer::url() const {
  return std::string(tls_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_);
}

void LlmServer::script(const std::string& path, std::vector<ScriptedReply> replies) {
  std::lock_guard lock(mutex_);
  scripts_[path] = std::move(replies);
  served_[path] = 0;
}

std::vector<RecordedRequest> LlmServer::requests() const {
  std::lock_guard lock(mutex_);
  return requests_;
}

int LlmServer::max_in_flight() const {
  std::lock_guard lock(mutex_);
  return max_in_flight_;
}

ScriptedReply LlmServer::next_reply(const std::string& path) {
  auto script = scripts_.find(path);
  if (script == scripts_.end() || script->second.empty()) {
    ScriptedReply missing;
    missing.status = 404;
    missing.body = nlohmann::json{{"error",
                                   {{"message", "no scripted reply for " + path},
                                    {"type", "invalid_request_error"},
                                    {"param", nullptr},
                                    {"code", "unknown_url"}}}}
                       .dump();
    return missing;
  }
  std::size_t& served = served_[path];
  const ScriptedReply& reply = script->second[std::min(served, script->second.size() - 1)];
  ++served;
  return reply;
}

void LlmServer::handle(const httplib::Request& request, httplib::Response& response) {
  ScriptedReply reply;
  {
    std::unique_lock lock(mutex_);
    requests_.push_back({request.method, request.path, request.headers, request.body,
                         std::chrono::steady_clock::now()});
    reply = next_reply(request.path);
    max_in_flight_ = std::max(max_in_flight_, ++in_flight_);
    if (reply.delay_s > 0) {
      // Woken early when the server shuts down, so a never-answering script ends with
      // its test.
      stopping_cv_.wait_for(lock, std::chrono::duration<double>(reply.delay_s),
                            [&] { return stopping_; });
    }
    --in_flight_;
  }
  response.status = reply.status;
  for (const auto& [name, value] : reply.headers) response.set_header(name, value);
  response.set_content(reply.body, reply.content_type);
}

std::string llm_fixture(const std::string& name) {
  return read_file(source_path("tests/fixtures/llm/" + name));
}

ScriptedReply fixture_reply(const std::string& name, int status) {
  ScriptedReply reply;
  reply.status = status;
  reply.body = llm_fixture(name);
  return reply;
}

ScopedEnv::ScopedEnv(std::string name, const char* value) : name_(std::move(name)) {
  if (const char* old = std::getenv(name_.c_str())) {
    had_ = true;
    old_ = old;
  }
  if (value) {
    setenv(name_.c_str(), value, 1);
  } else {
    unsetenv(name_.c_str());
  }
}

ScopedEnv::~ScopedEnv() {
  if (had_) {
    setenv(name_.c_str(), old_.c_str(), 1);
  } else {
    unsetenv(name_.c_str());
  }
}

}  // namespace maxcode::testing

#include "bot/service/operations/link_signature.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "runner/util/hex.h"

namespace maxcode::bot::service {

namespace {

constexpr std::size_t kKeyBytes = 32;  // as long as SHA-256's block needs to be unguessable


std::string read_key(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::ostringstream text;
  text << in.rdbuf();
  std::string key = text.str();
  while (!key.empty() && std::isspace(static_cast<unsigned char>(key.back()))) key.pop_back();
  return key;
}

}  // namespace

LinkSigner::LinkSigner(std::string key, double ttl_s) : key_(std::move(key)), ttl_s_(ttl_s) {
  if (key_.size() < 16) throw std::runtime_error("the link key is too short");
}

LinkSigner LinkSigner::from_key_file(const std::filesystem::path& file, double ttl_s) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd >= 0) {
    unsigned char raw[kKeyBytes];
    bool ok = RAND_bytes(raw, sizeof raw) == 1;
    const std::string text = to_hex(raw, sizeof raw) + "\n";
    // 0600 whatever the umask: the key grants every job's page.
    ok = ok && ::fchmod(fd, 0600) == 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ok = ::close(fd) == 0 && ok;
    if (!ok) {
      ::unlink(file.c_str());
      throw std::runtime_error(file.string() + ": cannot write the link key");
    }
  } else if (errno != EEXIST) {
    throw std::runtime_error(file.string() + ": cannot create the link key");
  }
  std::string key = read_key(file);
  // A second process may have created the file an instant ago and not written it yet.
  for (int i = 0; i < 50 && key.empty(); ++i) {
    ::usleep(10'000);
    key = read_key(file);
  }
  if (key.size() < 2 * kKeyBytes)
    throw std::runtime_error(file.string() + ": holds no link key (64 hex digits expected; delete it to make a new one)");
  return LinkSigner(key, ttl_s);
}

std::string LinkSigner::sign(std::int64_t job_id, std::int64_t expires) const {
  // The purpose label keeps a signature of this key from meaning anything elsewhere.
  const std::string message = "maxcode-job-link\n" + std::to_string(job_id) + "\n" + std::to_string(expires);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (!HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()), reinterpret_cast<const unsigned char*>(message.data()),
            message.size(), digest, &length))
    throw std::runtime_error("HMAC-SHA256 failed (OpenSSL)");
  return to_hex(digest, length);
}

std::string LinkSigner::query(std::int64_t job_id, double now) const {
  const auto expires = static_cast<std::int64_t>(std::floor(now + ttl_s_));
  return "exp=" + std::to_string(expires) + "&sig=" + sign(job_id, expires);
}

LinkCheck LinkSigner::verify(std::int64_t job_id, std::string_view exp, std::string_view sig, double now) const {
  std::int64_t expires = 0;
  if (exp.empty() || exp.size() > 18 || !std::all_of(exp.begin(), exp.end(), [](unsigned char c) { return std::isdigit(c); }))
    return LinkCheck::kBad;
  std::from_chars(exp.data(), exp.data() + exp.size(), expires);
  const std::string expected = sign(job_id, expires);
  std::string given(sig);
  std::transform(given.begin(), given.end(), given.begin(), [](unsigned char c) { return std::tolower(c); });
  if (given.size() != expected.size() || CRYPTO_memcmp(given.data(), expected.data(), expected.size()) != 0)
    return LinkCheck::kBad;
  if (static_cast<double>(expires) <= now || static_cast<double>(expires) > now + ttl_s_ + 1) return LinkCheck::kExpired;
  return LinkCheck::kValid;
}

}  // namespace maxcode::bot::service

// The signed links to job pages: a link verifies for its job until it expires, and
// for nothing else; the key file is made once, 0600, and read back.
#include "bot/service/operations/link_signature.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <thread>
#include <vector>

#include "runner/util/files.h"
#include "support/test_support.h"

namespace maxcode::bot::service {
namespace {

const std::string kKey(64, 'k');
constexpr double kNow = 1'800'000'000;
constexpr double kDay = 86400;

// exp and sig from "exp=...&sig=...".
std::pair<std::string, std::string> parts(const std::string& query) {
  const auto amp = query.find('&');
  return {query.substr(4, amp - 4), query.substr(amp + 5)};
}

TEST(LinkSignature, ALinkVerifiesForItsJobUntilItExpires) {
  const LinkSigner links(kKey, 30 * kDay);
  const auto [exp, sig] = parts(links.query(7, kNow));
  EXPECT_EQ(exp, "1802592000");
  EXPECT_EQ(sig.size(), 64u);
  EXPECT_EQ(links.verify(7, exp, sig, kNow), LinkCheck::kValid);
  EXPECT_EQ(links.verify(7, exp, sig, kNow + 29 * kDay), LinkCheck::kValid);
  // The expiry is exclusive; at and after it the link is refused.
  EXPECT_EQ(links.verify(7, exp, sig, kNow + 30 * kDay), LinkCheck::kExpired);
  EXPECT_EQ(links.verify(7, exp, sig, kNow + 31 * kDay), LinkCheck::kExpired);
  // Upper-case hex is the same signature.
  std::string upper = sig;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_EQ(links.verify(7, exp, upper, kNow), LinkCheck::kValid);
}

TEST(LinkSignature, TamperedOtherJobOtherKeyAndMalformedAreRefused) {
  const LinkSigner links(kKey, 30 * kDay);
  const auto [exp, sig] = parts(links.query(7, kNow));
  std::string flipped = sig;
  flipped[10] = flipped[10] == '0' ? '1' : '0';
  EXPECT_EQ(links.verify(7, exp, flipped, kNow), LinkCheck::kBad);
  EXPECT_EQ(links.verify(8, exp, sig, kNow), LinkCheck::kBad) << "another job's link";
  EXPECT_EQ(links.verify(7, std::to_string(std::stoll(exp) + 1), sig, kNow), LinkCheck::kBad) << "a longer life";
  EXPECT_EQ(LinkSigner(std::string(64, 'x'), 30 * kDay).verify(7, exp, sig, kNow), LinkCheck::kBad) << "another key";
  for (const std::string& bad_exp : {std::string(), std::string("-1"), std::string("1e9"), std::string(" 1802592000"),
                                     std::string("99999999999999999999")})
    EXPECT_EQ(links.verify(7, bad_exp, sig, kNow), LinkCheck::kBad) << bad_exp;
  for (const std::string& bad_sig : {std::string(), sig.substr(0, 63), sig + "0", std::string(64, 'z')})
    EXPECT_EQ(links.verify(7, exp, bad_sig, kNow), LinkCheck::kBad) << bad_sig;
}

TEST(LinkSignature, ShorteningTheLifetimeShortensLinksGivenOut) {
  const auto [exp, sig] = parts(LinkSigner(kKey, 30 * kDay).query(7, kNow));
  EXPECT_EQ(LinkSigner(kKey, 30 * kDay).verify(7, exp, sig, kNow + kDay), LinkCheck::kValid);
  // The operator cut the lifetime to a week: a link with 29 days left is refused.
  EXPECT_EQ(LinkSigner(kKey, 7 * kDay).verify(7, exp, sig, kNow + kDay), LinkCheck::kExpired);
  EXPECT_EQ(LinkSigner(kKey, 7 * kDay).verify(7, exp, sig, kNow + 24 * kDay), LinkCheck::kValid);
}

TEST(LinkSignature, TheKeyFileIsMadeOncePrivateAndReadBack) {
  testing::TempDir dir;
  const auto file = dir / "job-links.key";
  std::vector<std::string> queries(8);
  std::vector<std::thread> threads;
  // Processes starting at once agree on one key.
  for (std::size_t i = 0; i < queries.size(); ++i)
    threads.emplace_back([&, i] { queries[i] = LinkSigner::from_key_file(file, kDay).query(3, kNow); });
  for (auto& t : threads) t.join();
  for (const auto& q : queries) EXPECT_EQ(q, queries[0]);
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(read_text(file).size(), 65u);  // 64 hex digits and a newline
  EXPECT_EQ(LinkSigner::from_key_file(file, kDay).query(3, kNow), queries[0]);
  // Another key file signs differently.
  EXPECT_NE(LinkSigner::from_key_file(dir / "other.key", kDay).query(3, kNow), queries[0]);
  // A file that holds no key is an error naming it, not a weak key.
  write_text(dir / "empty.key", "short\n");
  try {
    LinkSigner::from_key_file(dir / "empty.key", kDay);
    FAIL() << "a short key was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("empty.key"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace maxcode::bot::service

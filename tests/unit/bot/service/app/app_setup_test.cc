// GitHub's App manifest flow against the local GitHub (tests/github/server.mjs): the
// setup page as a browser gets it, GitHub's redirect to the callback with a wrong and
// with the right state, the conversion, the files `maxcode serve` reads (modes,
// contents, a key GitHub accepts), the printed summary without secrets, and the
// failures an operator meets: a code used twice or expired, files already there, an
// API that does not answer.
#include "bot/service/app/app_setup.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
#include <regex>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>

#include "bot/github/app_auth.h"
#include "bot/service/service_config.h"
#include "support/github_api.h"
#include "support/test_support.h"

namespace maxcode::bot::service {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

unsigned mode_of(const fs::path& path) {
  struct stat st{};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

// The inverse of html_escape(), for the manifest in the page's hidden field.
std::string html_unescape(std::string text) {
  for (auto [entity, c] : {std::pair{"&quot;", "\""}, {"&#39;", "'"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}}) {
    for (std::size_t at = text.find(entity); at != std::string::npos; at = text.find(entity, at + 1))
      text.replace(at, std::string(entity).size(), c);
  }
  return text;
}

std::string code_setup_failure(const AppSetupOptions& options, const std::string& code) {
  std::ostringstream out;
  try {
    convert_and_store(options, code, out);
  } catch (const AppSetupError& e) {
    EXPECT_EQ(out.str(), "") << "nothing is printed as stored";
    return e.what();
  }
  ADD_FAILURE() << "converting " << code << " succeeded";
  return "";
}

const json kPermissions = {{"contents", "write"}, {"metadata", "read"}};

TEST(AppSetup, BrowserFlowStoresWhatServeReadsAndPrintsNoSecret) {
  std::string why;
  testing::FakeGithub* github = testing::FakeGithub::get(&why);
  if (!github) GTEST_SKIP() << why;
  github->reset();
  testing::TempDir tmp;

  AppSetupOptions options;
  options.public_url = "https://maxcode.example.com/";
  options.out_dir = tmp / "etc-maxcode";
  options.github_url = "https://github.example";  // the browser's side: never contacted here
  options.api_url = github->url();
  options.org = "acme";
  options.port = 0;
  std::ostringstream out;
  AppSetupServer setup(options, out);
  const int port = setup.bind();

  // The operator opens the address printed.
  std::smatch m;
  const std::string printed = out.str();
  ASSERT_TRUE(std::regex_search(printed, m, std::regex(R"(https://maxcode\.example\.com(/app-setup\?state=([0-9a-f]{32}))\n)")))
      << printed;
  const std::string start = m[1], state = m[2];

  CreatedApp created;
  std::exception_ptr error;
  std::thread serving([&] {
    try {
      created = setup.serve();
    } catch (...) {
      error = std::current_exception();
    }
  });

  httplib::Client browser("127.0.0.1", port);
  // Without the printed state the page (and so the state) is not given out.
  auto r = browser.Get("/app-setup");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 403);
  r = browser.Get("/app-setup?state=0123456789abcdef0123456789abcdef");
  EXPECT_EQ(r->status, 403);

  r = browser.Get(start);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(r->get_header_value("Cache-Control"), "no-store");
  EXPECT_NE(r->body.find("<form action=\"https://github.example/organizations/acme/settings/apps/new?state=" + state +
                         "\" method=\"post\">"),
            std::string::npos)
      << r->body;
  ASSERT_TRUE(std::regex_search(r->body, m, std::regex(R"re(<input type="hidden" name="manifest" value="([^"]*)">)re")));
  const json manifest = json::parse(html_unescape(m[1]));
  EXPECT_EQ(manifest["redirect_url"], "https://maxcode.example.com/app-setup/callback");
  EXPECT_EQ(manifest["hook_attributes"]["url"], "https://maxcode.example.com/webhooks/github");

  // The operator creates the App on GitHub; GitHub redirects with a code for it.
  github->setup({{"manifest_codes",
                  {{{"code", "4f2b0c1e9d"}, {"manifest", manifest}, {"owner", "acme"},
                    {"installations", {{{"id", 77}, {"permissions", kPermissions}}}}}}}});

  // A redirect that does not carry this setup's state is refused and converts nothing.
  r = browser.Get("/app-setup/callback?code=4f2b0c1e9d&state=" + std::string(32, 'a'));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 403);
  EXPECT_NE(r->body.find("Nothing was converted or stored"), std::string::npos) << r->body;
  r = browser.Get("/app-setup/callback?code=4f2b0c1e9d");
  EXPECT_EQ(r->status, 403);
  EXPECT_FALSE(github->stats()["operations"].contains("apps/create-from-manifest"));
  EXPECT_FALSE(fs::exists(options.out_dir));

  r = browser.Get("/app-setup/callback?code=4f2b0c1e9d&state=" + state);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_NE(r->body.find("install it"), std::string::npos) << r->body;
  serving.join();
  ASSERT_FALSE(error);
  EXPECT_EQ(created.slug, "maxcode");
  EXPECT_EQ(github->stats()["operations"]["apps/create-from-manifest"], 1);

  // The files, private to this user.
  const AppSetupFiles files(options.out_dir);
  EXPECT_EQ(mode_of(files.dir), 0700u);
  for (const fs::path& f : files.all()) EXPECT_EQ(mode_of(f), 0600u) << f;
  const std::string pem = testing::read_file(files.app_key);
  EXPECT_EQ(pem.rfind("-----BEGIN RSA PRIVATE KEY-----\n", 0), 0u) << pem.substr(0, 40);
  EXPECT_EQ(pem, created.pem);
  const std::string env = testing::read_file(files.webhook_secret_env);
  ASSERT_TRUE(std::regex_match(env, m, std::regex("MAXCODE_WEBHOOK_SECRET=([0-9a-f]{40})\n"))) << env;
  const std::string secret = m[1];

  // service.json is a config `maxcode serve --config` reads as it is, and its key and id
  // are the App's: GitHub takes a JWT signed with them for an installation token.
  const ServiceConfig config = load_service_config(files.service_json);
  EXPECT_EQ(config.app_id, created.id);
  EXPECT_EQ(config.app_key_file, fs::absolute(files.app_key));
  EXPECT_EQ(config.api_url, github->url());
  EXPECT_EQ(config.public_url, "https://maxcode.example.com");
  EXPECT_EQ(config.webhook_secret_env, "MAXCODE_WEBHOOK_SECRET");
  ClientOptions client;
  client.api_url = config.api_url;
  AppInstallationTokens tokens({config.app_id, testing::read_file(config.app_key_file), "77"}, client);
  EXPECT_EQ(tokens.token().rfind("ghs_", 0), 0u);

  // The summary names the files, the id and the slug, and holds no secret.
  const std::string summary = out.str();
  for (const std::string& want : std::vector<std::string>{files.service_json.string(), files.app_key.string(), files.webhook_secret_env.string(),
                                  "id " + created.id, "slug maxcode", "owned by acme", "/apps/maxcode/installations/new",
                                  "maxcode serve --config " + files.service_json.string()})
    EXPECT_NE(summary.find(want), std::string::npos) << want << " in:\n" << summary;
  EXPECT_EQ(summary.find(secret), std::string::npos) << summary;
  std::istringstream key_lines(pem);
  for (std::string line; std::getline(key_lines, line);)
    if (line.find("-----") == std::string::npos) EXPECT_EQ(summary.find(line), std::string::npos) << "a line of the key";
  EXPECT_NE(summary.find("refused a callback"), std::string::npos) << summary;

  // The code converted once: a second use is GitHub's 404, said plainly, nothing stored.
  AppSetupOptions again = options;
  again.out_dir = tmp / "again";
  const std::string second = code_setup_failure(again, "4f2b0c1e9d");
  EXPECT_NE(second.find("answered 404"), std::string::npos) << second;
  EXPECT_NE(second.find("GitHub does not know this code"), std::string::npos) << second;
  EXPECT_NE(second.find("was created on GitHub"), std::string::npos) << second;
  EXPECT_FALSE(fs::exists(again.out_dir));
  github->check_clean();
}

TEST(AppSetup, ExpiredCodesExistingFilesAndASilentApiAreClearErrors) {
  std::string why;
  testing::FakeGithub* github = testing::FakeGithub::get(&why);
  if (!github) GTEST_SKIP() << why;
  github->reset();
  testing::TempDir tmp;
  const json manifest = {{"name", "maxcode"}, {"url", "https://maxcode.example.com"},
                         {"hook_attributes", {{"url", "https://maxcode.example.com/webhooks/github"}}}};
  github->setup({{"manifest_codes",
                  {{{"code", "old"}, {"manifest", manifest}, {"expires_in_s", -1}},
                   {{"code", "fresh"}, {"manifest", manifest}}}}});
  AppSetupOptions options;
  options.api_url = github->url();
  options.out_dir = tmp / "out";

  // Older than an hour: GitHub's 404.
  std::string e = code_setup_failure(options, "old");
  EXPECT_NE(e.find("answered 404"), std::string::npos) << e;
  EXPECT_FALSE(fs::exists(options.out_dir));

  // A file in the way is refused before the code is spent, naming the file.
  fs::create_directories(options.out_dir);
  testing::write_file(options.out_dir / "app-key.pem", "an older key\n");
  e = code_setup_failure(options, "fresh");
  EXPECT_NE(e.find((options.out_dir / "app-key.pem").string() + " exists"), std::string::npos) << e;
  EXPECT_EQ(testing::read_file(options.out_dir / "app-key.pem"), "an older key\n");
  EXPECT_THROW(AppSetupServer(AppSetupOptions{.public_url = "https://x.example", .out_dir = options.out_dir}, std::cerr),
               AppSetupError);
  EXPECT_EQ(github->stats()["operations"]["apps/create-from-manifest"], 1) << "only the expired code was sent";

  // No answer from the API: the code may still convert, and the message says how.
  AppSetupOptions silent = options;
  silent.api_url = "http://127.0.0.1:1";
  silent.out_dir = tmp / "silent";
  try {
    convert_and_store(silent, "fresh", std::cerr);
    ADD_FAILURE() << "no API, yet converted";
  } catch (const AppSetupError& error) {
    const std::string what = error.what();
    EXPECT_TRUE(error.retryable());
    EXPECT_NE(what.find("no answer from POST http://127.0.0.1:1/app-manifests/{code}/conversions"), std::string::npos) << what;
    EXPECT_NE(what.find("maxcode app-setup --code fresh --out DIR --api-url http://127.0.0.1:1`"), std::string::npos) << what;
  }

  // The code is still good: the CLI converts it (`--code`, the manual path), exit 0.
  const fs::path out_dir = tmp / "manual";
  const std::string command = testing::maxcode_binary().string() + " app-setup --code fresh --out " + out_dir.string() +
                              " --api-url " + github->url() + " 2>&1";
  auto run = [&](int& status) {
    std::string text;
    FILE* pipe = ::popen(command.c_str(), "r");
    char buffer[4096];
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) text.append(buffer, n);
    status = ::pclose(pipe);
    return text;
  };
  int status = -1;
  std::string text = run(status);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << text;
  EXPECT_NE(text.find("Created the GitHub App \"maxcode\""), std::string::npos) << text;
  for (const fs::path& f : AppSetupFiles(out_dir).all()) EXPECT_EQ(mode_of(f), 0600u) << f;
  EXPECT_EQ(text.find(testing::read_file(out_dir / "webhook-secret.env").substr(23, 40)), std::string::npos) << text;
  // And a second time: exit 1, the existing files named first (nothing sent to GitHub).
  text = run(status);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << text;
  EXPECT_NE(text.find("maxcode app-setup: error: " + (out_dir / "service.json").string() + " exists"), std::string::npos) << text;
  github->check_clean();
}

}  // namespace
}  // namespace maxcode::bot::service

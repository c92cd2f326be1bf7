#include "runner/search/method.h"

#include "runner/llm/http_client.h"

namespace maxcode {

namespace fs = std::filesystem;

namespace {

llm::Provider& add_provider(Method& m, const llm::ProviderConfig& config) {
  m.providers.push_back(llm::make_provider(config));
  return *m.providers.back();
}

fs::path replay_directory(const Config& config, const fs::path& repo, const fs::path& replay_dir) {
  fs::path dir = !replay_dir.empty() ? replay_dir : fs::path(config.search.replay_dir);
  if (dir.empty()) throw PolicyError("the replay policy needs a directory: --replay-dir or search.replay_dir");
  if (replay_dir.empty() && dir.is_relative()) dir = repo / dir;  // config paths are repo-relative
  return dir;
}

// The llm section with each provider's key taken from the environment the CLI read.
llm::LlmConfig keyed_llm_config(const Config& config, const Environment& env) {
  llm::LlmConfig llm_config = llm::parse_llm_config(config.llm, config.file.string());
  for (std::optional<llm::ProviderConfig>* provider : {&llm_config.propose, &llm_config.critique, &llm_config.rerank})
    if (*provider && !(*provider)->api_key_env.empty())
      (*provider)->api_key = env.variable((*provider)->api_key_env).value_or("");
  return llm_config;
}

// A provider that calls a hosted model needs its key variable now, not after the baseline.
void check_key(const std::optional<llm::ProviderConfig>& provider, const std::string& field) {
  if (!provider || provider->provider == "command") return;
  try {
    llm::HttpClient(*provider, field + " (" + provider->provider + " " + provider->model + ")").api_key();
  } catch (const llm::LlmError& e) {
    throw PolicyError(e.what());
  }
}

}  // namespace

std::string why_nothing_reaches(const Config& config, const fs::path& repo, const fs::path& replay_dir,
                                const std::vector<std::string>& unit_names, const std::string& file) {
  if (config.search.policy != SearchPolicy::kReplay) return "";
  const fs::path dir = replay_directory(config, repo, replay_dir);
  return replay_reaches(dir, unit_names, file)
             ? ""
             : "none of the candidate files in " + dir.string() + " defines " +
                   (unit_names.size() == 1 ? "'" + unit_names.front() + "'" : "a function of its unit") +
                   " or changes " + file;
}

namespace {

// The LLM presets need a model to propose.
void require_propose(const llm::LlmConfig& llm_config, SearchPolicy policy, const std::string& file) {
  if (!llm_config.propose)
    throw PolicyError("the " + search_policy_name(policy) + " policy needs a model: set llm.propose in " + file +
                      " (provider openai, anthropic or command)");
}

// "llm" asks for the LLM critic (and needs llm.critique); "auto" takes it when there is one.
bool wants_llm_critic(const SearchConfig& sc, const llm::LlmConfig& llm_config, const std::string& file) {
  if (sc.critic == CriticChoice::kLlm && !llm_config.critique)
    throw PolicyError("search.critic is \"llm\" but " + file + " has no llm.critique");
  return sc.critic == CriticChoice::kLlm || (sc.critic == CriticChoice::kAuto && llm_config.critique);
}

bool wants_llm_reranker(const SearchConfig& sc, const llm::LlmConfig& llm_config, const std::string& file) {
  if (sc.reranker == RerankerChoice::kLlm && !llm_config.rerank)
    throw PolicyError("search.reranker is \"llm\" but " + file + " has no llm.rerank");
  return sc.reranker == RerankerChoice::kLlm || (sc.reranker == RerankerChoice::kAuto && llm_config.rerank);
}

}  // namespace

void check_policy_inputs(const Config& config, const fs::path& repo, const fs::path& replay_dir,
                         const Environment& env) {
  const SearchConfig& sc = config.search;
  const std::string file = config.file.string();
  const llm::LlmConfig llm_config = keyed_llm_config(config, env);
  switch (sc.policy) {
    case SearchPolicy::kTune:
      if (sc.knobs.empty() && !repository_declares_knobs(repo))
        throw PolicyError("the tune policy has nothing to tune: " + repo.string() +
                          " declares no knobs (add search.knobs to " + file +
                          " or a `// maxcode: tune NAME v1 v2 ...` comment above a constant), or choose "
                          "another policy (search.policy: replay, maxcode, cuda-llm, effilearner)");
      break;
    case SearchPolicy::kReplay:
      make_replay_policy(replay_directory(config, repo, replay_dir));  // the directory and its files, checked
      break;
    case SearchPolicy::kMaxcode:
    case SearchPolicy::kCudaLlm:
    case SearchPolicy::kEffilearner:
      require_propose(llm_config, sc.policy, file);
      check_key(llm_config.propose, "llm.propose");
      break;
  }
  if (wants_llm_critic(sc, llm_config, file)) check_key(llm_config.critique, "llm.critique");
  if (wants_llm_reranker(sc, llm_config, file)) check_key(llm_config.rerank, "llm.rerank");
}

std::unique_ptr<Method> make_method(const MethodInputs& in, Spend& spend) {
  auto m = std::make_unique<Method>();
  const SearchConfig& sc = in.config.search;
  const std::string file = in.config.file.string();
  m->context = in.context;
  m->prompts = load_prompts(in.repo);
  const llm::LlmConfig llm_config = keyed_llm_config(in.config, in.env);

  switch (sc.policy) {
    case SearchPolicy::kTune:
      m->policy = make_tune_policy(in.knobs, sc.max_evaluations, sc.seed);
      break;
    case SearchPolicy::kReplay:
      m->policy = make_replay_policy(replay_directory(in.config, in.repo, in.replay_dir));
      break;
    case SearchPolicy::kMaxcode:
    case SearchPolicy::kCudaLlm:
    case SearchPolicy::kEffilearner:
      require_propose(llm_config, sc.policy, file);
      m->policy = make_llm_policy(sc.policy, m->context, add_provider(*m, *llm_config.propose), m->prompts, spend,
                                  sc.trajectory_window);
      break;
  }

  // Critic: an LLM when one is configured for it, else the rule-based one. Policies
  // that do not read critiques (tune, replay) still get them in reports.
  if (wants_llm_critic(sc, llm_config, file))
    m->critic = make_llm_critic(m->context, add_provider(*m, *llm_config.critique), m->prompts, &spend);
  else if (sc.critic != CriticChoice::kNone)
    m->critic = make_metrics_critic(m->context);

  if (wants_llm_reranker(sc, llm_config, file))
    m->reranker = make_llm_reranker(m->context, add_provider(*m, *llm_config.rerank), m->prompts, spend);
  return m;
}

}  // namespace maxcode

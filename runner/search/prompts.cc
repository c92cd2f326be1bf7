#include "runner/search/prompts.h"

#include <stdexcept>

#include "runner/util/files.h"

namespace maxcode {

namespace {

constexpr const char* kSystem =
    "You are an expert performance engineer for C++ and CUDA. You rewrite one function so that it "
    "runs faster while computing exactly the same results, and you answer with code that compiles.";

constexpr const char* kPropose = R"(Optimize the function `{{function}}` from `{{file}}`.

## Original
```{{language}}
{{original}}
```

## The file around it (for reference; do not repeat it)
```{{language}}
{{context}}
```
{{best}}{{trajectory}}
## Task
{{instruction}}

Reply with exactly one fenced code block that holds the complete new definition of `{{function}}` with the same signature. {{rules}} A few sentences before the block may say what you changed and why.
)";

constexpr const char* kCritique = R"(You review one attempt at making `{{function}}` from `{{file}}` faster.

## Original
```{{language}}
{{original}}
```

## Attempt
```{{language}}
{{attempt}}
```

## What happened when it was built, tested and timed
{{evaluation}}

If the attempt failed, explain the exact cause of the failure and how to fix it. If it is correct, diagnose what now limits its speed (memory bandwidth, compute, the algorithm, or the launch configuration) and suggest concrete next steps. Answer in at most 150 words, without code blocks.
)";

constexpr const char* kRerank = R"(A search is making `{{function}}` from `{{file}}` faster. It has tried {{attempts}} versions; the best so far runs {{best_speedup}}x faster than the original.

## Original
```{{language}}
{{original}}
```

## New candidate (not yet run)
```{{language}}
{{candidate}}
```

Estimate the best speedup over the original that the search can still reach if it continues from this candidate (1.0 = no gain; 0 if it will not compile or is wrong). Answer with one number only, for example 1.8.
)";

std::string read_override(const std::filesystem::path& root, const std::string& name, const std::string& fallback) {
  const auto file = root / ".maxcode" / "prompts" / (name + ".md");
  std::error_code ec;
  return std::filesystem::is_regular_file(file, ec) ? read_text(file) : fallback;
}

}  // namespace

Prompts default_prompts() { return {kSystem, kPropose, kCritique, kRerank}; }

Prompts load_prompts(const std::filesystem::path& root) {
  Prompts p = default_prompts();
  p.system = read_override(root, "system", p.system);
  p.propose = read_override(root, "propose", p.propose);
  p.critique = read_override(root, "critique", p.critique);
  p.rerank = read_override(root, "rerank", p.rerank);
  return p;
}

std::string render_template(std::string_view text, const std::map<std::string, std::string>& vars) {
  std::string out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t open = text.find("{{", pos);
    if (open == std::string_view::npos) break;
    const std::size_t close = text.find("}}", open + 2);
    if (close == std::string_view::npos) break;
    out.append(text.substr(pos, open - pos));
    const std::string name(text.substr(open + 2, close - open - 2));
    auto it = vars.find(name);
    if (it == vars.end()) throw std::invalid_argument("prompt template uses {{" + name + "}}, which is not defined");
    out += it->second;
    pos = close + 2;
  }
  out.append(text.substr(pos));
  return out;
}

}  // namespace maxcode

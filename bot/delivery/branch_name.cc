#include "bot/delivery/branch_name.h"

#include "runner/util/slug.h"

namespace maxcode::bot {

std::string slug(const std::string& text) { return ref_slug(text); }

std::string branch_for(const std::string& file, const std::string& function) {
  return "maxcode/" + slug(file) + "/" + slug(function);
}

}  // namespace maxcode::bot

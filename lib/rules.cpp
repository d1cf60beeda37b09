#include "lib/rules.hpp"

#include <lanes/error.hpp>
#include <nlohmann/json.hpp>

#include "algos/registry.hpp"

namespace lanes::detail {

namespace {

[[noreturn]] void bad(std::size_t index, const std::string& why) {
  throw Error(Errc::invalid_argument, "LANES_RULES: rule " + std::to_string(index) + ": " + why);
}

algos::Collective collective_named(const std::string& name, std::size_t index) {
  using algos::Collective;
  std::string known;
  for (Collective c : algos::kCollectives) {
    if (name == algos::to_string(c)) return c;
    known += std::string(known.empty() ? "" : ", ") + algos::to_string(c);
  }
  bad(index, "unknown collective '" + name + "' (" + known + ")");
}

}  // namespace

Rules Rules::parse(const std::string& text) {
  Rules out;
  if (text.empty()) return out;
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(Errc::invalid_argument, std::string("LANES_RULES: not valid JSON: ") + e.what());
  }
  if (!doc.is_object() || !doc.contains("rules") || !doc["rules"].is_array()) {
    throw Error(Errc::invalid_argument, "LANES_RULES: expected {\"rules\": [ ... ]}");
  }
  std::size_t index = 0;
  for (const auto& j : doc["rules"]) {
    if (!j.is_object()) bad(index, "not an object");
    Rule r;
    try {
      for (const auto& [key, value] : j.items()) {
        if (key == "collective")
          r.coll = collective_named(value.get<std::string>(), index);
        else if (key == "algorithm")
          r.algorithm = value.get<std::string>();
        else if (key == "min_bytes")
          r.min_bytes = value.get<std::size_t>();
        else if (key == "max_bytes")
          r.max_bytes = value.get<std::size_t>();
        else if (key == "min_ranks")
          r.min_ranks = value.get<int>();
        else if (key == "max_ranks")
          r.max_ranks = value.get<int>();
        else
          bad(index, "unknown field '" + key + "'");
      }
    } catch (const nlohmann::json::exception& e) {
      bad(index, std::string("wrong type: ") + e.what());
    }
    if (!j.contains("collective")) bad(index, "no \"collective\"");
    if (algos::find_algorithm(r.coll, r.algorithm) == nullptr) {
      bad(index, "'" + r.algorithm + "' is not a " + algos::to_string(r.coll) +
                     " algorithm; available: " + algos::algorithm_names(r.coll));
    }
    out.rules_.push_back(std::move(r));
    ++index;
  }
  return out;
}

std::optional<std::string> Rules::match(algos::Collective coll, std::size_t bytes,
                                        int ranks) const {
  for (const Rule& r : rules_) {
    if (r.coll == coll && bytes >= r.min_bytes && bytes < r.max_bytes && ranks >= r.min_ranks &&
        ranks < r.max_ranks) {
      return r.algorithm;
    }
  }
  return std::nullopt;
}

}  // namespace lanes::detail

#include "lib/rules.hpp"

#include <cmath>
#include <cstdint>
#include <lanes/error.hpp>
#include <nlohmann/json.hpp>
#include <optional>

#include "algos/registry.hpp"

namespace lanes::detail {

namespace {

// Where an error is: the file (or LANES_RULES when unnamed), the rule, the field.
struct Place {
  const std::string& source;
  std::size_t index;
  std::string coll;  // the rule's collective once known
  [[noreturn]] void bad(const std::string& why) const {
    throw Error(Errc::invalid_argument, source + ": rule " + std::to_string(index) +
                                            (coll.empty() ? "" : " (" + coll + ")") + ": " + why);
  }
};

algos::Collective collective_named(const std::string& name, const Place& at) {
  using algos::Collective;
  std::string known;
  for (Collective c : algos::kCollectives) {
    if (name == algos::to_string(c)) return c;
    known += std::string(known.empty() ? "" : ", ") + algos::to_string(c);
  }
  at.bad("unknown collective '" + name + "' (" + known + ")");
}

std::string text_field(const nlohmann::json& value, const std::string& key, const Place& at) {
  if (!value.is_string()) at.bad("\"" + key + "\" must be a string, not " + value.dump());
  return value.get<std::string>();
}

// A whole number from 0 to `hi`: a JSON integer, or a number whose value is one (65536.0, 1e6).
// nullopt for booleans, strings, fractions, negative numbers and anything above `hi`; nothing is
// converted before it is known to fit.
std::optional<std::uint64_t> whole_number(const nlohmann::json& value, std::uint64_t hi) {
  std::uint64_t x = 0;
  if (value.is_number_unsigned()) {
    x = value.get<std::uint64_t>();
  } else if (value.is_number_integer()) {  // signed: only negative values are stored this way
    const auto v = value.get<std::int64_t>();
    if (v < 0) return std::nullopt;
    x = static_cast<std::uint64_t>(v);
  } else if (value.is_number_float()) {
    const double v = value.get<double>();
    // 2^64 is exact as a double; every double below it without a fraction fits in uint64_t.
    if (!std::isfinite(v) || v < 0 || v != std::floor(v) || v >= 18446744073709551616.0) {
      return std::nullopt;
    }
    x = static_cast<std::uint64_t>(v);
  } else {
    return std::nullopt;
  }
  if (x > hi) return std::nullopt;
  return x;
}

std::uint64_t whole_field(const nlohmann::json& value, const std::string& key, std::uint64_t hi,
                          const char* unit, const Place& at) {
  const auto x = whole_number(value, hi);
  if (!x) {
    at.bad("\"" + key + "\" must be a whole number of " + unit + " from 0 to " +
           std::to_string(hi) + ", not " + value.dump());
  }
  return *x;
}

}  // namespace

Rules Rules::parse(const std::string& text, const std::string& source) {
  Rules out;
  if (text.empty()) return out;
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(Errc::invalid_argument, source + ": not valid JSON: " + e.what());
  }
  if (!doc.is_object() || !doc.contains("rules") || !doc["rules"].is_array()) {
    throw Error(Errc::invalid_argument, source + ": expected {\"rules\": [ ... ]}");
  }
  constexpr auto max_bytes = std::numeric_limits<std::size_t>::max();
  constexpr auto max_ranks = static_cast<std::uint64_t>(std::numeric_limits<int>::max());
  std::size_t index = 0;
  for (const auto& j : doc["rules"]) {
    Place at{source, index, {}};
    if (!j.is_object()) at.bad("not an object");
    Rule r;
    if (!j.contains("collective")) at.bad("no \"collective\"");
    r.coll = collective_named(text_field(j["collective"], "collective", at), at);
    at.coll = algos::to_string(r.coll);
    for (const auto& [key, value] : j.items()) {
      if (key == "collective") continue;
      if (key == "algorithm")
        r.algorithm = text_field(value, key, at);
      else if (key == "min_bytes")
        r.min_bytes = whole_field(value, key, max_bytes, "bytes", at);
      else if (key == "max_bytes")
        r.max_bytes = whole_field(value, key, max_bytes, "bytes", at);
      else if (key == "min_ranks")
        r.min_ranks = static_cast<int>(whole_field(value, key, max_ranks, "ranks", at));
      else if (key == "max_ranks")
        r.max_ranks = static_cast<int>(whole_field(value, key, max_ranks, "ranks", at));
      else
        at.bad("unknown field '" + key + "'");
    }
    if (!j.contains("algorithm")) at.bad("no \"algorithm\"");
    if (algos::find_algorithm(r.coll, r.algorithm) == nullptr) {
      at.bad("'" + r.algorithm + "' is not a " + algos::to_string(r.coll) +
             " algorithm; available: " + algos::algorithm_names(r.coll));
    }
    // min_* inclusive, max_* exclusive: an empty range would never match.
    if (r.min_bytes >= r.max_bytes) {
      at.bad("min_bytes " + std::to_string(r.min_bytes) + " is not below max_bytes " +
             std::to_string(r.max_bytes) + ": the rule would never match");
    }
    if (r.min_ranks >= r.max_ranks) {
      at.bad("min_ranks " + std::to_string(r.min_ranks) + " is not below max_ranks " +
             std::to_string(r.max_ranks) + ": the rule would never match");
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

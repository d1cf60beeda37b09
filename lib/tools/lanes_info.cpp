// lanes-info: prints the layout lanes sees (nodes, local ranks, rails and who drives which) and
// every configuration variable with its value and default. Run it like the application:
//   mpirun -np 4 lanes-info            text
//   mpirun -np 4 lanes-info --json     one JSON document (layout, variables, algorithms)
#include <cstdio>
#include <cstring>
#include <lanes/lanes.hpp>
#include <nlohmann/json.hpp>

#include "algos/registry.hpp"
#include "lib/config.hpp"

namespace {

// The configuration table as the README shows it.
void print_config_markdown() {
  std::printf("| variable | default | meaning |\n|---|---|---|\n");
  for (const auto& var : lanes::detail::config_table()) {
    std::printf("| `%s` | `%s` | %s |\n", var.name, var.default_value, var.help.c_str());
  }
}

void print_config() {
  std::printf("%-26s %-10s %-10s %s\n", "variable", "value", "default", "meaning");
  for (const auto& var : lanes::detail::config_table()) {
    std::printf("%-26s %-10s %-10s %s\n", var.name, lanes::detail::config_value(var).c_str(),
                var.default_value, var.help.c_str());
  }
}

// {"layout": Runtime::describe_json(), "variables": [...], "algorithms": {collective: [...]}}.
std::string json_document(const lanes::Runtime& rt) {
  using json = nlohmann::ordered_json;
  json variables = json::array();
  for (const auto& var : lanes::detail::config_table()) {
    variables.push_back({{"name", var.name},
                         {"value", lanes::detail::config_value(var)},
                         {"default", var.default_value},
                         {"meaning", var.help}});
  }
  json algorithms = json::object();
  for (auto coll : lanes::algos::kCollectives) {
    json list = json::array();
    for (const auto* a : lanes::algos::algorithms_for(coll)) {
      list.push_back({{"name", a->name}, {"summary", a->summary}});
    }
    algorithms[lanes::algos::to_string(coll)] = list;
  }
  const json doc = {{"layout", json::parse(rt.describe_json())},
                    {"variables", variables},
                    {"algorithms", algorithms}};
  return doc.dump(2);
}

}  // namespace

int main(int argc, char** argv) {
  const char* arg = argc > 1 ? argv[1] : "";
  if (std::strcmp(arg, "--help") == 0 || std::strcmp(arg, "-h") == 0) {
    std::printf(
        "usage: [mpirun ...] lanes-info [--config | --config-markdown | --json]\n"
        "Prints the layout lanes sees and its configuration variables (--config: the variables\n"
        "only, without starting; --json: layout, variables and algorithms as one JSON "
        "document).\n");
    return 0;
  }
  if (std::strcmp(arg, "--config-markdown") == 0) {
    print_config_markdown();
    return 0;
  }
  if (std::strcmp(arg, "--config") == 0) {
    print_config();
    return 0;
  }
  const bool as_json = std::strcmp(arg, "--json") == 0;
  if (argc > 1 && !as_json) {
    std::fprintf(stderr, "lanes-info: unknown option '%s' (see --help)\n", arg);
    return 2;
  }
  try {
    lanes::Runtime rt = lanes::Runtime::init();
    const std::string text = as_json ? json_document(rt) : rt.describe();
    if (rt.world().rank() == 0) {
      std::printf("%s\n", text.c_str());
      if (!as_json) print_config();
    }
    std::fflush(stdout);
  } catch (const lanes::Error& e) {
    std::fprintf(stderr, "lanes-info: %s\n", e.what());
    return 1;
  }
  return 0;
}

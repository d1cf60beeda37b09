// lanes-info: prints the layout lanes sees (nodes, local ranks, rails and who drives which) and
// every configuration variable with its value and default. Run it like the application:
//   mpirun -np 4 lanes-info
#include <cstdio>
#include <cstring>
#include <lanes/lanes.hpp>

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

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    std::printf(
        "usage: [mpirun ...] lanes-info [--config]\n"
        "Prints the layout lanes sees and its configuration variables.\n");
    return 0;
  }
  if (argc > 1 && std::strcmp(argv[1], "--config-markdown") == 0) {
    print_config_markdown();
    return 0;
  }
  if (argc > 1 && std::strcmp(argv[1], "--config") == 0) {
    print_config();
    return 0;
  }
  try {
    lanes::Runtime rt = lanes::Runtime::init();
    const std::string text = rt.describe();
    if (rt.world().rank() == 0) {
      std::printf("%s\n", text.c_str());
      print_config();
    }
    std::fflush(stdout);
  } catch (const lanes::Error& e) {
    std::fprintf(stderr, "lanes-info: %s\n", e.what());
    return 1;
  }
  return 0;
}

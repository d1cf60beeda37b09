// Configuration strings: the input is NAME=VALUE lines that stand for the environment; any of
// them parses or throws lanes::Error.
#include <cstddef>
#include <cstdint>
#include <lanes/error.hpp>
#include <map>
#include <string>

#include "lib/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::map<std::string, std::string> env;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(at, end - at);
    const std::size_t eq = line.find('=');
    if (eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
    at = end + 1;
  }
  try {
    (void)lanes::detail::Config::parse([&](const char* name) -> const char* {
      const auto it = env.find(name);
      return it == env.end() ? nullptr : it->second.c_str();
    });
  } catch (const lanes::Error&) {
  }
  return 0;
}

// LANES_RULES files: any input either parses or throws lanes::Error; nothing else (a crash, an
// undefined behaviour the sanitizers see, another exception) is allowed.
#include <cstddef>
#include <cstdint>
#include <lanes/error.hpp>
#include <string>

#include "lib/rules.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const lanes::detail::Rules rules = lanes::detail::Rules::parse(text, "fuzz");
    // Whatever parsed answers every question.
    for (const auto coll : {lanes::algos::Collective::bcast, lanes::algos::Collective::allreduce}) {
      (void)rules.match(coll, size, static_cast<int>(size % 1000));
    }
  } catch (const lanes::Error&) {
  }
  return 0;
}

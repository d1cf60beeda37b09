// LANES_CALIBRATION files: any input parses or throws lanes::Error, and what parses writes out as
// text that parses to the same parameters.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <lanes/error.hpp>
#include <string>

#include "algos/cost_model.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  using lanes::algos::MachineParams;
  MachineParams params;
  try {
    params = MachineParams::parse(text, "fuzz");
  } catch (const lanes::Error&) {
    return 0;
  }
  const std::string written = params.to_text();
  if (MachineParams::parse(written, "written").to_text() != written) std::abort();
  return 0;
}

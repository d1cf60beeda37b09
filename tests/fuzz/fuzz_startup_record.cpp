// The start-up records processes exchange: any bytes decode or throw lanes::Error, and a record
// that decodes survives encoding and decoding again unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <lanes/error.hpp>
#include <span>
#include <vector>

#include "lib/startup_wire.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data), size);
  std::vector<std::byte> addresses;
  lanes::detail::StartupRecord rec;
  try {
    rec = lanes::detail::decode_startup_record(in, addresses);
  } catch (const lanes::Error&) {
    return 0;
  }
  const std::vector<std::byte> once = lanes::detail::encode_startup_record(rec, addresses);
  std::vector<std::byte> again_addresses;
  const lanes::detail::StartupRecord again =
      lanes::detail::decode_startup_record(once, again_addresses);
  const std::vector<std::byte> twice = lanes::detail::encode_startup_record(again, again_addresses);
  if (once.size() != twice.size() || std::memcmp(once.data(), twice.data(), once.size()) != 0) {
    std::abort();
  }
  return 0;
}

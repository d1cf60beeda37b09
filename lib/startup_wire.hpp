// The record every process contributes to the start-up exchange, on the wire.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "lib/world_layout.hpp"

namespace lanes::detail {

// The record and this process's packed rail addresses, as one message.
std::vector<std::byte> encode_startup_record(const StartupRecord& rec,
                                             std::span<const std::byte> addresses);
// Throws lanes::Error(bootstrap) for anything encode_startup_record cannot have written.
StartupRecord decode_startup_record(std::span<const std::byte> bytes,
                                    std::vector<std::byte>& addresses);

}  // namespace lanes::detail

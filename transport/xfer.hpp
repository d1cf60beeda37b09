// State of one nonblocking transfer, shared by the UCX rails and the shared-memory channels.
#pragma once

#include <cstdint>

namespace lanes::transport {

enum class XferState : std::uint8_t { pending, done, failed };

// 64-bit UCX tag of one message: communicator, collective sequence number, sender's rank in
// the communicator and the message's index between the pair within that collective.
struct MessageKey {
  std::uint32_t comm = 0;   // 16 bits used
  std::uint32_t seq = 0;    // 16 bits used (wraps)
  std::uint32_t src = 0;    // 20 bits used
  std::uint32_t index = 0;  // 12 bits used
};

constexpr std::uint32_t kMaxTagRanks = 1u << 20;
// Message indices 0..4094 carry collectives' data; 4095 is a communicator's control message.
constexpr std::uint32_t kMaxTagMessages = (1u << 12) - 1;
constexpr std::uint32_t kControlIndex = (1u << 12) - 1;

inline std::uint64_t make_tag(const MessageKey& k) {
  return (std::uint64_t{k.src & 0xFFFFFu} << 44) | (std::uint64_t{k.comm & 0xFFFFu} << 28) |
         (std::uint64_t{k.seq & 0xFFFFu} << 12) | std::uint64_t{k.index & 0xFFFu};
}

// A control message to communicator `comm` from its rank `src` (revocation).
inline std::uint64_t make_control_tag(std::uint32_t comm, std::uint32_t src) {
  return make_tag(MessageKey{comm, 0, src, kControlIndex});
}
// The bits a receive of any member's control message ignores: sender and sequence number.
constexpr std::uint64_t kControlAnySource =
    (std::uint64_t{0xFFFFFu} << 44) | (std::uint64_t{0xFFFFu} << 12);

}  // namespace lanes::transport

// lanes::Error: the one exception type of lanes. Setup and argument errors throw it; its message
// says what went wrong and what to do about it.
#pragma once

#include <stdexcept>
#include <string>

namespace lanes {

enum class Errc {
  invalid_argument,  // a caller's argument is wrong (root, sizes, overlap, null data)
  mismatch,          // ranks disagree about a collective (LANES_CHECK=1)
  bootstrap,         // PMIx / MPI / allgather bootstrap present but failing
  topology,          // device or node discovery (unknown LANES_RAILS entry, ...)
  transport,         // UCX or shared-memory failure
  peer_failure,      // a peer process died or its connection broke
  timeout,           // no progress within LANES_TIMEOUT
  resource,          // out of memory or /dev/shm space
  finalized,         // use after the runtime was finalized
  internal,          // a bug in lanes: please report it
};

inline const char* to_string(Errc code) noexcept {
  switch (code) {
    case Errc::invalid_argument:
      return "invalid argument";
    case Errc::mismatch:
      return "mismatch between ranks";
    case Errc::bootstrap:
      return "bootstrap";
    case Errc::topology:
      return "topology";
    case Errc::transport:
      return "transport";
    case Errc::peer_failure:
      return "peer failure";
    case Errc::timeout:
      return "timeout";
    case Errc::resource:
      return "resource";
    case Errc::finalized:
      return "finalized";
    case Errc::internal:
      return "internal error";
  }
  return "unknown";
}

class Error : public std::runtime_error {
 public:
  Error(Errc code, const std::string& message)
      : std::runtime_error(std::string("lanes: ") + to_string(code) + ": " + message),
        code_(code) {}
  Errc code() const noexcept { return code_; }

 private:
  Errc code_;
};

}  // namespace lanes

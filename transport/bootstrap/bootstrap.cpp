// Pieces shared by every bootstrap: PMIx detection, the single-process bootstrap, the two-round
// variable-sized allgather and the host name.
#include "transport/bootstrap/bootstrap.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>

#include "lanes/error.hpp"

namespace lanes::transport {

bool pmix_server_present() {
  for (char** env = environ; env != nullptr && *env != nullptr; ++env) {
    const std::string_view entry(*env);
    const std::string_view name = entry.substr(0, entry.find('='));
    // PMIx servers of different versions export PMIX_SERVER_URI, PMIX_SERVER_URI2, ..URI41.
    if (name == "PMIX_NAMESPACE" || name.starts_with("PMIX_SERVER_URI")) return true;
  }
  return false;
}

std::string this_host_name() {
  char buf[HOST_NAME_MAX + 1] = {};
  if (gethostname(buf, sizeof(buf)) != 0) {
    throw Error(Errc::bootstrap, std::string("gethostname() failed: ") + std::strerror(errno) +
                                     "; pass an explicit node key to the bootstrap");
  }
  buf[HOST_NAME_MAX] = '\0';  // POSIX does not promise termination on truncation
  return std::string(buf);
}

namespace {

class SingleBootstrap final : public Bootstrap {
 public:
  SingleBootstrap() : node_key_(this_host_name()) {}
  const char* name() const override { return "single"; }
  int rank() const override { return 0; }
  int size() const override { return 1; }
  Placement placement() const override { return Placement{node_key_, 0, 1}; }
  void allgather(const void* mine, void* all, std::size_t bytes) override {
    // memmove: a caller may pass its block in place (mine == all).
    if (bytes > 0 && mine != all) std::memmove(all, mine, bytes);
  }

 private:
  std::string node_key_;
};

}  // namespace

std::unique_ptr<Bootstrap> make_single_bootstrap() {
  return std::make_unique<SingleBootstrap>();
}

std::vector<std::vector<std::byte>> allgatherv(Bootstrap& boot,
                                               const std::vector<std::byte>& mine) {
  const auto nranks = static_cast<std::size_t>(boot.size());

  const std::uint64_t my_len = mine.size();
  std::vector<std::uint64_t> lens(nranks);
  boot.allgather(&my_len, lens.data(), sizeof(my_len));

  const std::uint64_t max_len = *std::max_element(lens.begin(), lens.end());
  if (max_len > std::numeric_limits<std::size_t>::max() / nranks) {
    throw Error(Errc::invalid_argument, "allgatherv: " + std::to_string(nranks) +
                                            " blocks of up to " + std::to_string(max_len) +
                                            " bytes do not fit in memory");
  }
  const auto stride = static_cast<std::size_t>(max_len);

  std::vector<std::vector<std::byte>> out(nranks);
  // Every rank sees the same lengths, so every rank skips the second round together.
  if (stride == 0) return out;

  std::vector<std::byte> padded(stride);
  std::copy(mine.begin(), mine.end(), padded.begin());
  std::vector<std::byte> all(nranks * stride);
  boot.allgather(padded.data(), all.data(), stride);

  for (std::size_t r = 0; r < nranks; ++r) {
    const auto first = all.begin() + static_cast<std::ptrdiff_t>(r * stride);
    out[r].assign(first, first + static_cast<std::ptrdiff_t>(lens[r]));
  }
  return out;
}

}  // namespace lanes::transport

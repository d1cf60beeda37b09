// Bootstrap over an allgather the application supplies (its own launcher, a key-value store, or
// threads standing in for ranks in tests).
#include <exception>
#include <utility>

#include "lanes/error.hpp"
#include "transport/bootstrap/bootstrap.hpp"

namespace lanes::transport {

namespace {

class AllgatherBootstrap final : public Bootstrap {
 public:
  AllgatherBootstrap(int rank, int size, AllgatherFn fn, std::string node_key)
      : rank_(rank), size_(size), fn_(std::move(fn)), node_key_(std::move(node_key)) {}

  const char* name() const override { return "allgather"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  // The application tells us only the node key; local rank and size stay unknown (-1).
  Placement placement() const override { return Placement{node_key_, -1, -1}; }

  void allgather(const void* mine, void* all, std::size_t bytes) override {
    try {
      fn_(mine, all, bytes);
    } catch (const std::exception& e) {
      throw Error(Errc::bootstrap,
                  "the allgather function given to make_allgather_bootstrap "
                  "threw on rank " +
                      std::to_string(rank_) + ": " + e.what());
    } catch (...) {
      throw Error(Errc::bootstrap,
                  "the allgather function given to make_allgather_bootstrap threw a "
                  "non-standard exception on rank " +
                      std::to_string(rank_));
    }
  }

 private:
  int rank_;
  int size_;
  AllgatherFn fn_;
  std::string node_key_;
};

}  // namespace

std::unique_ptr<Bootstrap> make_allgather_bootstrap(int rank, int size, AllgatherFn fn,
                                                    std::string node_key) {
  if (size < 1) {
    throw Error(Errc::invalid_argument,
                "make_allgather_bootstrap: size must be >= 1, got " + std::to_string(size));
  }
  if (rank < 0 || rank >= size) {
    throw Error(Errc::invalid_argument,
                "make_allgather_bootstrap: rank must be in [0, size=" + std::to_string(size) +
                    "), got " + std::to_string(rank));
  }
  if (!fn) {
    throw Error(Errc::invalid_argument,
                "make_allgather_bootstrap: fn is empty; pass a function that gathers every "
                "rank's block into `all`");
  }
  if (node_key.empty()) node_key = this_host_name();
  return std::make_unique<AllgatherBootstrap>(rank, size, std::move(fn), std::move(node_key));
}

}  // namespace lanes::transport

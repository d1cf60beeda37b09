// How processes find each other before any rail exists: PMIx, an MPI communicator, a
// user-supplied allgather, or a single process. lanes needs only rank, size, where this process
// sits, and an allgather of equal-sized blocks.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace lanes::transport {

// Where this process sits, as far as the launcher knows. Ranks with equal node_key share a node
// (shared memory works between them). local_rank/local_size are -1 when the launcher does not say.
struct Placement {
  std::string node_key;
  int local_rank = -1;
  int local_size = -1;
};

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  virtual const char* name() const = 0;  // "pmix", "mpi", "allgather", "single"
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual Placement placement() const = 0;
  // Every rank passes `bytes` bytes; `all` receives size()*bytes, rank r's block at r*bytes.
  // Collective over all ranks. Throws lanes::Error(bootstrap) on failure.
  virtual void allgather(const void* mine, void* all, std::size_t bytes) = 0;
};

using AllgatherFn = std::function<void(const void* mine, void* all, std::size_t bytes)>;

// True when the environment says a PMIx server launched us (PMIX_NAMESPACE / PMIX_SERVER_URI*).
bool pmix_server_present();
// PMIx_Init plus rank, size and placement from PMIx keys; allgather by Put/Commit/Fence/Get.
// Throws lanes::Error(bootstrap) saying which step failed and why.
std::unique_ptr<Bootstrap> make_pmix_bootstrap();

std::unique_ptr<Bootstrap> make_allgather_bootstrap(int rank, int size, AllgatherFn fn,
                                                    std::string node_key);
std::unique_ptr<Bootstrap> make_single_bootstrap();

// Variable-sized allgather on top of the fixed-sized one (two rounds: lengths, then blocks).
std::vector<std::vector<std::byte>> allgatherv(Bootstrap& boot, const std::vector<std::byte>& mine);

std::string this_host_name();

}  // namespace lanes::transport

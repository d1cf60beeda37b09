// One collective at one count, as lanes-bench measures it: the buffers (allocated once and reused
// by every variant and repetition), the MPI library's call, lanes' call, and the values that
// --check writes and expects.
//
// Counts are MPI_INT elements as MPI counts them: bcast c ints in all; scatter and gather c ints
// per process (the root's buffer holds p * c); alltoall c ints per pair (p * c per buffer);
// allgather c ints per process (the receive buffer holds p * c); allreduce and reduce c ints per
// process (the vector each process contributes, MPI_SUM).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <lanes/lanes.hpp>
#include <memory>
#include <string>

namespace lanes_bench {

class CollectiveBench {
 public:
  virtual ~CollectiveBench() = default;
  // Writes every input from (rank, index, salt) and overwrites every output with a value that
  // differs from the one expected, so a call that does nothing cannot pass.
  virtual void fill(int salt) = 0;
  virtual void run_native() = 0;
  virtual void run_lanes(const lanes::CallOptions& options) = 0;
  // Empty when every output holds the value expected for `salt`; else the first mismatch.
  virtual std::string verify(int salt) const = 0;
};

// With a runtime, buffers allocated from now on come from its shared heap (lanes::Memory), for
// both libraries' calls; nullptr: ordinary memory (the default).
void use_shared_memory(const lanes::Runtime* runtime);

// Bytes of buffers one process allocates for `collective` at `count`.
std::size_t buffer_bytes(const std::string& collective, std::size_t count, int rank, int size,
                         int root);

// `world` and `comm` hold the same processes in the same order.
std::unique_ptr<CollectiveBench> make_bench(const std::string& collective, std::size_t count,
                                            int root, lanes::Communicator& world, MPI_Comm comm);

}  // namespace lanes_bench

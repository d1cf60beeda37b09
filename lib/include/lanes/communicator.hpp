// lanes::Communicator: a group of processes and the collectives they run together.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <numeric>
#include <ranges>
#include <span>
#include <string>
#include <type_traits>

#include <lanes/reduction.hpp>
#include <lanes/request.hpp>

namespace lanes {

namespace detail {
class CommImpl;

// A v-collective's arguments as the typed and byte entry points pass them on: counts and
// displacements in units of `unit` bytes (1 for the byte versions, the element size for the
// typed ones).
enum class VKind { scatterv, gatherv, allgatherv, alltoallv };
struct VSpec {
  VKind kind = VKind::scatterv;
  int root = 0;
  std::span<const std::byte> send;
  std::span<std::byte> recv;
  std::span<const std::size_t> send_counts, send_displs;
  std::span<const std::size_t> recv_counts, recv_displs;
  std::size_t unit = 1;
};
}  // namespace detail

// Any contiguous, sized range of trivially copyable elements: std::span<T>, std::vector<T>,
// std::array<T, N>, C arrays.
template <class R>
concept ContiguousData = std::ranges::contiguous_range<R> && std::ranges::sized_range<R> &&
    std::is_trivially_copyable_v<std::ranges::range_value_t<R>>;

// Per-call options. Empty algorithm: the runtime's choice (LANES_<COLL>_ALGORITHM or its default).
// lanes: the number of lanes (ports) k the algorithm uses; 0: LANES_LANES or the number of rails.
// first_rail: lane l runs over rail (first_rail + l) mod R of the R rails, so that
// {.lanes = 1, .first_rail = 1} runs a call on the second rail alone.
struct CallOptions {
  std::string algorithm;
  int lanes = 0;
  int first_rail = 0;
};

// A reduction operation the caller defines, on elements of type T (any trivially copyable type
// whose alignment is at most alignof(std::max_align_t)). fn(in, inout, count) sets
// inout[i] = in[i] (+) inout[i] for i < count, `in` the left operand (MPI_User_function's order).
// The operation must be associative and the same on every rank: lanes combines every rank's
// contribution exactly once, in an order each algorithm fixes, so every rank gets the same bits.
// commutative = false: the result is the combination in rank order, r_0 (+) r_1 (+) ... (+)
// r_{p-1}; lanes then chooses among the algorithms that combine in rank order only (a reduce to
// another root than 0 reduces to rank 0 and sends the result on where its algorithms combine in
// that order only toward rank 0), and an algorithm named by CallOptions::algorithm or
// LANES_<COLLECTIVE>_ALGORITHM that does not is an error (lanes::Error, invalid_argument).
// fn runs inside the lanes calls that progress the reduction (the blocking call, or
// Request/Plan wait() and test(), also those of other calls of the same runtime), on their
// thread. `in` may point into the caller's send buffer and is never written. fn must not call
// lanes nor throw (a throw fails the call and leaves the communicator unusable). Nonblocking
// calls and plans keep their own copy of fn.
template <class T>
struct UserOp {
  std::function<void(const T* in, T* inout, std::size_t count)> fn;
  bool commutative = true;
};

// A user operation of the byte versions: fn as UserOp::fn over `count` elements of `elem_size`
// bytes each (the buffers hold whole elements; lanes' own buffers are aligned for any element).
struct UserOpBytes {
  std::function<void(const void* in, void* inout, std::size_t count)> fn;
  std::size_t elem_size = 1;
  bool commutative = true;
};

class Communicator {
 public:
  Communicator() = default;  // a null communicator (from split() with a negative color)

  bool valid() const noexcept { return impl_ != nullptr; }
  int rank() const;
  int size() const;
  int node_rank() const;  // index of this process on its node
  int node_size() const;  // processes of this communicator on this node
  int num_nodes() const;
  int node() const;  // index of this process's node, 0..num_nodes()-1, numbered by first rank

  // Collective over this communicator. Processes passing the same color form one new
  // communicator, ordered by key (ties by rank); a negative color gives a null communicator.
  // Shares this process's rails, workers and endpoints: costs an exchange, not new UCX contexts.
  Communicator split(int color, int key) const;

  // Collective over the processes `ranks` lists (ranks of this communicator, in the new
  // communicator's order, the calling process among them) and only them: `exchange` must
  // allgather over exactly those processes in that order, leaving process i's `bytes` bytes at
  // all + i * bytes. For frameworks that form groups without the other processes (as
  // MPI_Comm_create_group does). Shares the rails, like split().
  using Exchange = std::function<void(const void* mine, void* all, std::size_t bytes)>;
  Communicator group(std::span<const int> ranks, const Exchange& exchange) const;

  // Byte versions. bcast: `data` on every rank, the root's is sent. scatter: `send` holds
  // size() blocks of recv.size() bytes at the root and is ignored (may be empty) elsewhere.
  // gather: the root's `recv` receives size() blocks of send.size() bytes (ignored elsewhere).
  // alltoall: `send` and `recv` hold size() equal blocks. allgather: `recv` receives size()
  // blocks of send.size() bytes.
  void bcast_bytes(std::span<std::byte> data, int root, const CallOptions& options = {});
  void scatter_bytes(std::span<const std::byte> send, std::span<std::byte> recv, int root,
                     const CallOptions& options = {});
  void gather_bytes(std::span<const std::byte> send, std::span<std::byte> recv, int root,
                    const CallOptions& options = {});
  void alltoall_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                      const CallOptions& options = {});
  void allgather_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                       const CallOptions& options = {});

  // Reductions over vectors of `type` elements, combined with `op`. reduce: every rank's `send`
  // holds the vector, the root's `recv` receives the combination (ignored elsewhere). allreduce:
  // `recv` receives it at every rank, bitwise the same everywhere (every algorithm fixes the
  // order of combination). In place: `send` and `recv` the same span (at the root for reduce).
  void reduce_bytes(std::span<const std::byte> send, std::span<std::byte> recv, Datatype type,
                    Op op, int root, const CallOptions& options = {});
  void allreduce_bytes(std::span<const std::byte> send, std::span<std::byte> recv, Datatype type,
                       Op op, const CallOptions& options = {});
  // `send` holds size() blocks of recv.size() bytes; rank r's `recv` receives the combination of
  // every rank's block r.
  void reduce_scatter_block_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                                  Datatype type, Op op, const CallOptions& options = {});

  // The same reductions with a user operation (UserOpBytes) instead of a Datatype and an Op.
  void reduce_bytes(std::span<const std::byte> send, std::span<std::byte> recv, UserOpBytes op,
                    int root, const CallOptions& options = {});
  void allreduce_bytes(std::span<const std::byte> send, std::span<std::byte> recv, UserOpBytes op,
                       const CallOptions& options = {});
  void reduce_scatter_block_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                                  UserOpBytes op, const CallOptions& options = {});

  // Returns once every rank of the communicator has called it.
  void barrier(const CallOptions& options = {});

  // The v-variants: blocks of a size per rank, at displacements of the caller's choosing (counts
  // and displacements in bytes here, in elements in the typed versions; MPI's meaning).
  // scatterv: at the root, rank i's block is send_counts[i] bytes at send_displs[i] of `send`;
  //   every rank receives its block into `recv` (recv.size() bytes; the root's own too).
  //   send_counts and send_displs are read at the root only (may be empty elsewhere).
  // gatherv: every rank sends `send`; at the root, rank i's block lands at recv_displs[i] of
  //   `recv` and is recv_counts[i] bytes (read at the root only).
  // allgatherv: every rank sends `send` (recv_counts[rank] bytes); rank i's block lands at
  //   recv_displs[i] of every rank's `recv`. Every rank passes the same counts.
  // alltoallv: send_counts[j] bytes at send_displs[j] go to rank j, whose recv_counts[i] and
  //   recv_displs[i] say where rank i's block lands; the two sizes of a pair must agree.
  // Blocks of a receive buffer must not overlap; a send buffer's may. A size that differs
  // between the two ends of a block fails the call on the ranks involved (lanes::Error); with
  // LANES_CHECK=1 every rank compares all sizes first and fails alike.
  void scatterv_bytes(std::span<const std::byte> send, std::span<const std::size_t> send_counts,
                      std::span<const std::size_t> send_displs, std::span<std::byte> recv, int root,
                      const CallOptions& options = {});
  void gatherv_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                     std::span<const std::size_t> recv_counts,
                     std::span<const std::size_t> recv_displs, int root,
                     const CallOptions& options = {});
  void allgatherv_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                        std::span<const std::size_t> recv_counts,
                        std::span<const std::size_t> recv_displs, const CallOptions& options = {});
  void alltoallv_bytes(std::span<const std::byte> send, std::span<const std::size_t> send_counts,
                       std::span<const std::size_t> send_displs, std::span<std::byte> recv,
                       std::span<const std::size_t> recv_counts,
                       std::span<const std::size_t> recv_displs, const CallOptions& options = {});
  // Nonblocking v-variants: the counts and displacements are read before they return.
  Request iscatterv_bytes(std::span<const std::byte> send, std::span<const std::size_t> send_counts,
                          std::span<const std::size_t> send_displs, std::span<std::byte> recv,
                          int root, const CallOptions& options = {});
  Request igatherv_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                         std::span<const std::size_t> recv_counts,
                         std::span<const std::size_t> recv_displs, int root,
                         const CallOptions& options = {});
  Request iallgatherv_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                            std::span<const std::size_t> recv_counts,
                            std::span<const std::size_t> recv_displs,
                            const CallOptions& options = {});
  Request ialltoallv_bytes(std::span<const std::byte> send,
                           std::span<const std::size_t> send_counts,
                           std::span<const std::size_t> send_displs, std::span<std::byte> recv,
                           std::span<const std::size_t> recv_counts,
                           std::span<const std::size_t> recv_displs,
                           const CallOptions& options = {});

  // Nonblocking: the same collectives, started now, completed by Request::wait()/test().
  Request ibcast_bytes(std::span<std::byte> data, int root, const CallOptions& options = {});
  Request iscatter_bytes(std::span<const std::byte> send, std::span<std::byte> recv, int root,
                         const CallOptions& options = {});
  Request igather_bytes(std::span<const std::byte> send, std::span<std::byte> recv, int root,
                        const CallOptions& options = {});
  Request ialltoall_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                          const CallOptions& options = {});
  Request iallgather_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                           const CallOptions& options = {});
  Request ireduce_bytes(std::span<const std::byte> send, std::span<std::byte> recv, Datatype type,
                        Op op, int root, const CallOptions& options = {});
  Request iallreduce_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                           Datatype type, Op op, const CallOptions& options = {});
  Request ibarrier(const CallOptions& options = {});
  Request ireduce_scatter_block_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                                      Datatype type, Op op, const CallOptions& options = {});
  Request ireduce_bytes(std::span<const std::byte> send, std::span<std::byte> recv, UserOpBytes op,
                        int root, const CallOptions& options = {});
  Request iallreduce_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                           UserOpBytes op, const CallOptions& options = {});
  Request ireduce_scatter_block_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                                      UserOpBytes op, const CallOptions& options = {});

  // Persistent: arguments checked and schedule built once; Plan::start()/wait() many times.
  Plan plan_bcast_bytes(std::span<std::byte> data, int root, const CallOptions& options = {});
  Plan plan_scatter_bytes(std::span<const std::byte> send, std::span<std::byte> recv, int root,
                          const CallOptions& options = {});
  Plan plan_gather_bytes(std::span<const std::byte> send, std::span<std::byte> recv, int root,
                         const CallOptions& options = {});
  Plan plan_alltoall_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                           const CallOptions& options = {});
  Plan plan_allgather_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                            const CallOptions& options = {});
  Plan plan_reduce_bytes(std::span<const std::byte> send, std::span<std::byte> recv, Datatype type,
                         Op op, int root, const CallOptions& options = {});
  Plan plan_allreduce_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                            Datatype type, Op op, const CallOptions& options = {});
  Plan plan_reduce_scatter_block_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                                       Datatype type, Op op, const CallOptions& options = {});
  Plan plan_reduce_bytes(std::span<const std::byte> send, std::span<std::byte> recv, UserOpBytes op,
                         int root, const CallOptions& options = {});
  Plan plan_allreduce_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                            UserOpBytes op, const CallOptions& options = {});
  Plan plan_reduce_scatter_block_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                                       UserOpBytes op, const CallOptions& options = {});

  // Typed versions over any contiguous range of trivially copyable elements.
  template <ContiguousData R>
  void bcast(R&& data, int root, const CallOptions& options = {}) {
    bcast_bytes(writable(data), root, options);
  }
  template <ContiguousData S, ContiguousData R>
  void scatter(const S& send, R&& recv, int root, const CallOptions& options = {}) {
    scatter_bytes(readable(send), writable(recv), root, options);
  }
  template <ContiguousData S, ContiguousData R>
  void gather(const S& send, R&& recv, int root, const CallOptions& options = {}) {
    gather_bytes(readable(send), writable(recv), root, options);
  }
  template <ContiguousData S, ContiguousData R>
  void alltoall(const S& send, R&& recv, const CallOptions& options = {}) {
    alltoall_elements(readable(send), writable(recv), unit_of<S, R>(), options);
  }
  template <ContiguousData S, ContiguousData R>
  void allgather(const S& send, R&& recv, const CallOptions& options = {}) {
    allgather_bytes(readable(send), writable(recv), options);
  }
  // Typed reductions: the element type gives the Datatype (integers, float, double, bfloat16);
  // send and recv hold the same element type.
  template <ContiguousData S, ContiguousData R>
  void reduce(const S& send, R&& recv, Op op, int root, const CallOptions& options = {}) {
    reduce_bytes(readable(send), writable(recv), reduced_type<S, R>(), op, root, options);
  }
  template <ContiguousData S, ContiguousData R>
  void allreduce(const S& send, R&& recv, Op op, const CallOptions& options = {}) {
    allreduce_bytes(readable(send), writable(recv), reduced_type<S, R>(), op, options);
  }
  template <ContiguousData R>
  void allreduce(R&& data, Op op, const CallOptions& options = {}) {  // in place
    const auto bytes = writable(data);
    allreduce_bytes(bytes, bytes, reduced_type<R, R>(), op, options);
  }
  template <ContiguousData S, ContiguousData R>
  void reduce_scatter_block(const S& send, R&& recv, Op op, const CallOptions& options = {}) {
    reduce_scatter_block_bytes(readable(send), writable(recv), reduced_type<S, R>(), op, options);
  }
  template <ContiguousData S, ContiguousData R>
  Request ireduce_scatter_block(const S& send, R&& recv, Op op, const CallOptions& options = {}) {
    return ireduce_scatter_block_bytes(readable(send), writable(recv), reduced_type<S, R>(), op,
                                       options);
  }
  template <ContiguousData S, ContiguousData R>
  Plan plan_reduce_scatter_block(const S& send, R&& recv, Op op, const CallOptions& options = {}) {
    return plan_reduce_scatter_block_bytes(readable(send), writable(recv), reduced_type<S, R>(), op,
                                           options);
  }
  template <ContiguousData S, ContiguousData R>
  Request ireduce(const S& send, R&& recv, Op op, int root, const CallOptions& options = {}) {
    return ireduce_bytes(readable(send), writable(recv), reduced_type<S, R>(), op, root, options);
  }
  template <ContiguousData S, ContiguousData R>
  Request iallreduce(const S& send, R&& recv, Op op, const CallOptions& options = {}) {
    return iallreduce_bytes(readable(send), writable(recv), reduced_type<S, R>(), op, options);
  }
  template <ContiguousData S, ContiguousData R>
  Plan plan_reduce(const S& send, R&& recv, Op op, int root, const CallOptions& options = {}) {
    return plan_reduce_bytes(readable(send), writable(recv), reduced_type<S, R>(), op, root,
                             options);
  }
  template <ContiguousData S, ContiguousData R>
  Plan plan_allreduce(const S& send, R&& recv, Op op, const CallOptions& options = {}) {
    return plan_allreduce_bytes(readable(send), writable(recv), reduced_type<S, R>(), op, options);
  }
  // Typed reductions with a user operation: send and recv hold T, the operation's element type.
  template <ContiguousData S, ContiguousData R, class T>
  void reduce(const S& send, R&& recv, const UserOp<T>& op, int root,
              const CallOptions& options = {}) {
    reduce_bytes(readable(send), writable(recv), user_bytes<S, R>(op), root, options);
  }
  template <ContiguousData S, ContiguousData R, class T>
  void allreduce(const S& send, R&& recv, const UserOp<T>& op, const CallOptions& options = {}) {
    allreduce_bytes(readable(send), writable(recv), user_bytes<S, R>(op), options);
  }
  template <ContiguousData R, class T>
  void allreduce(R&& data, const UserOp<T>& op, const CallOptions& options = {}) {  // in place
    const auto bytes = writable(data);
    allreduce_bytes(bytes, bytes, user_bytes<R, R>(op), options);
  }
  template <ContiguousData S, ContiguousData R, class T>
  void reduce_scatter_block(const S& send, R&& recv, const UserOp<T>& op,
                            const CallOptions& options = {}) {
    reduce_scatter_block_bytes(readable(send), writable(recv), user_bytes<S, R>(op), options);
  }
  template <ContiguousData S, ContiguousData R, class T>
  Request ireduce(const S& send, R&& recv, const UserOp<T>& op, int root,
                  const CallOptions& options = {}) {
    return ireduce_bytes(readable(send), writable(recv), user_bytes<S, R>(op), root, options);
  }
  template <ContiguousData S, ContiguousData R, class T>
  Request iallreduce(const S& send, R&& recv, const UserOp<T>& op,
                     const CallOptions& options = {}) {
    return iallreduce_bytes(readable(send), writable(recv), user_bytes<S, R>(op), options);
  }
  template <ContiguousData S, ContiguousData R, class T>
  Request ireduce_scatter_block(const S& send, R&& recv, const UserOp<T>& op,
                                const CallOptions& options = {}) {
    return ireduce_scatter_block_bytes(readable(send), writable(recv), user_bytes<S, R>(op),
                                       options);
  }
  template <ContiguousData S, ContiguousData R, class T>
  Plan plan_reduce(const S& send, R&& recv, const UserOp<T>& op, int root,
                   const CallOptions& options = {}) {
    return plan_reduce_bytes(readable(send), writable(recv), user_bytes<S, R>(op), root, options);
  }
  template <ContiguousData S, ContiguousData R, class T>
  Plan plan_allreduce(const S& send, R&& recv, const UserOp<T>& op,
                      const CallOptions& options = {}) {
    return plan_allreduce_bytes(readable(send), writable(recv), user_bytes<S, R>(op), options);
  }
  template <ContiguousData S, ContiguousData R, class T>
  Plan plan_reduce_scatter_block(const S& send, R&& recv, const UserOp<T>& op,
                                 const CallOptions& options = {}) {
    return plan_reduce_scatter_block_bytes(readable(send), writable(recv), user_bytes<S, R>(op),
                                           options);
  }
  template <ContiguousData R>
  Request ibcast(R&& data, int root, const CallOptions& options = {}) {
    return ibcast_bytes(writable(data), root, options);
  }
  template <ContiguousData S, ContiguousData R>
  Request iscatter(const S& send, R&& recv, int root, const CallOptions& options = {}) {
    return iscatter_bytes(readable(send), writable(recv), root, options);
  }
  template <ContiguousData S, ContiguousData R>
  Request igather(const S& send, R&& recv, int root, const CallOptions& options = {}) {
    return igather_bytes(readable(send), writable(recv), root, options);
  }
  template <ContiguousData S, ContiguousData R>
  Request ialltoall(const S& send, R&& recv, const CallOptions& options = {}) {
    return ialltoall_elements(readable(send), writable(recv), unit_of<S, R>(), options);
  }
  template <ContiguousData S, ContiguousData R>
  Request iallgather(const S& send, R&& recv, const CallOptions& options = {}) {
    return iallgather_bytes(readable(send), writable(recv), options);
  }
  template <ContiguousData R>
  Plan plan_bcast(R&& data, int root, const CallOptions& options = {}) {
    return plan_bcast_bytes(writable(data), root, options);
  }
  template <ContiguousData S, ContiguousData R>
  Plan plan_scatter(const S& send, R&& recv, int root, const CallOptions& options = {}) {
    return plan_scatter_bytes(readable(send), writable(recv), root, options);
  }
  template <ContiguousData S, ContiguousData R>
  Plan plan_gather(const S& send, R&& recv, int root, const CallOptions& options = {}) {
    return plan_gather_bytes(readable(send), writable(recv), root, options);
  }
  template <ContiguousData S, ContiguousData R>
  Plan plan_alltoall(const S& send, R&& recv, const CallOptions& options = {}) {
    return plan_alltoall_elements(readable(send), writable(recv), unit_of<S, R>(), options);
  }
  template <ContiguousData S, ContiguousData R>
  Plan plan_allgather(const S& send, R&& recv, const CallOptions& options = {}) {
    return plan_allgather_bytes(readable(send), writable(recv), options);
  }

  // Typed v-variants: counts and displacements in elements; send and recv hold one element type.
  template <ContiguousData S, ContiguousData R>
  void scatterv(const S& send, std::span<const std::size_t> send_counts,
                std::span<const std::size_t> send_displs, R&& recv, int root,
                const CallOptions& options = {}) {
    v_run(v_spec<S, R>(detail::VKind::scatterv, root, send, recv, send_counts, send_displs, {}, {}),
          options);
  }
  template <ContiguousData S, ContiguousData R>
  void gatherv(const S& send, R&& recv, std::span<const std::size_t> recv_counts,
               std::span<const std::size_t> recv_displs, int root,
               const CallOptions& options = {}) {
    v_run(v_spec<S, R>(detail::VKind::gatherv, root, send, recv, {}, {}, recv_counts, recv_displs),
          options);
  }
  template <ContiguousData S, ContiguousData R>
  void allgatherv(const S& send, R&& recv, std::span<const std::size_t> recv_counts,
                  std::span<const std::size_t> recv_displs, const CallOptions& options = {}) {
    v_run(v_spec<S, R>(detail::VKind::allgatherv, 0, send, recv, {}, {}, recv_counts, recv_displs),
          options);
  }
  template <ContiguousData S, ContiguousData R>
  void alltoallv(const S& send, std::span<const std::size_t> send_counts,
                 std::span<const std::size_t> send_displs, R&& recv,
                 std::span<const std::size_t> recv_counts, std::span<const std::size_t> recv_displs,
                 const CallOptions& options = {}) {
    v_run(v_spec<S, R>(detail::VKind::alltoallv, 0, send, recv, send_counts, send_displs,
                       recv_counts, recv_displs),
          options);
  }
  template <ContiguousData S, ContiguousData R>
  Request iscatterv(const S& send, std::span<const std::size_t> send_counts,
                    std::span<const std::size_t> send_displs, R&& recv, int root,
                    const CallOptions& options = {}) {
    return v_start(
        v_spec<S, R>(detail::VKind::scatterv, root, send, recv, send_counts, send_displs, {}, {}),
        options);
  }
  template <ContiguousData S, ContiguousData R>
  Request igatherv(const S& send, R&& recv, std::span<const std::size_t> recv_counts,
                   std::span<const std::size_t> recv_displs, int root,
                   const CallOptions& options = {}) {
    return v_start(
        v_spec<S, R>(detail::VKind::gatherv, root, send, recv, {}, {}, recv_counts, recv_displs),
        options);
  }
  template <ContiguousData S, ContiguousData R>
  Request iallgatherv(const S& send, R&& recv, std::span<const std::size_t> recv_counts,
                      std::span<const std::size_t> recv_displs, const CallOptions& options = {}) {
    return v_start(
        v_spec<S, R>(detail::VKind::allgatherv, 0, send, recv, {}, {}, recv_counts, recv_displs),
        options);
  }
  template <ContiguousData S, ContiguousData R>
  Request ialltoallv(const S& send, std::span<const std::size_t> send_counts,
                     std::span<const std::size_t> send_displs, R&& recv,
                     std::span<const std::size_t> recv_counts,
                     std::span<const std::size_t> recv_displs, const CallOptions& options = {}) {
    return v_start(v_spec<S, R>(detail::VKind::alltoallv, 0, send, recv, send_counts, send_displs,
                                recv_counts, recv_displs),
                   options);
  }

 private:
  friend class Runtime;
  friend class detail::CommImpl;
  explicit Communicator(std::shared_ptr<detail::CommImpl> impl) : impl_(std::move(impl)) {}

  template <class R>
  static std::span<std::byte> writable(R& r) {
    static_assert(!std::is_const_v<std::remove_reference_t<std::ranges::range_reference_t<R>>>,
                  "lanes: this buffer receives data and must not be const");
    return std::as_writable_bytes(std::span(std::ranges::data(r), std::ranges::size(r)));
  }
  template <class R>
  static std::span<const std::byte> readable(const R& r) {
    return std::as_bytes(std::span(std::ranges::data(r), std::ranges::size(r)));
  }
  // A typed alltoall's blocks hold whole elements of both sides' types (checked with the other
  // arguments, an invalid_argument error otherwise).
  template <class S, class R>
  static constexpr std::size_t unit_of() {
    return std::lcm(sizeof(std::ranges::range_value_t<S>), sizeof(std::ranges::range_value_t<R>));
  }
  void alltoall_elements(std::span<const std::byte> send, std::span<std::byte> recv,
                         std::size_t unit, const CallOptions& options);
  Request ialltoall_elements(std::span<const std::byte> send, std::span<std::byte> recv,
                             std::size_t unit, const CallOptions& options);
  Plan plan_alltoall_elements(std::span<const std::byte> send, std::span<std::byte> recv,
                              std::size_t unit, const CallOptions& options);
  template <class S, class R>
  static constexpr Datatype reduced_type() {
    using T = std::remove_cv_t<std::ranges::range_value_t<S>>;
    static_assert(std::is_same_v<T, std::remove_cv_t<std::ranges::range_value_t<R>>>,
                  "lanes: a reduction's send and recv hold the same element type");
    return datatype_of<T>();
  }

  // The byte form of a typed user operation; it holds its own copy of op.fn.
  template <class S, class R, class T>
  static UserOpBytes user_bytes(const UserOp<T>& op) {
    static_assert(std::is_same_v<T, std::remove_cv_t<std::ranges::range_value_t<S>>> &&
                      std::is_same_v<T, std::remove_cv_t<std::ranges::range_value_t<R>>>,
                  "lanes: a user operation's send and recv hold its element type T");
    static_assert(alignof(T) <= alignof(std::max_align_t),
                  "lanes: user operations take elements aligned to at most "
                  "alignof(std::max_align_t)");
    UserOpBytes bytes;
    if (op.fn) {
      bytes.fn = [fn = op.fn](const void* in, void* inout, std::size_t count) {
        fn(static_cast<const T*>(in), static_cast<T*>(inout), count);
      };
    }
    bytes.elem_size = sizeof(T);
    bytes.commutative = op.commutative;
    return bytes;
  }

  // A typed v-collective: send and recv hold one element type, counted in elements.
  template <class S, class R>
  static detail::VSpec v_spec(detail::VKind kind, int root, const S& send, R& recv,
                              std::span<const std::size_t> send_counts,
                              std::span<const std::size_t> send_displs,
                              std::span<const std::size_t> recv_counts,
                              std::span<const std::size_t> recv_displs) {
    using T = std::remove_cv_t<std::ranges::range_value_t<S>>;
    static_assert(std::is_same_v<T, std::remove_cv_t<std::ranges::range_value_t<R>>>,
                  "lanes: a typed v-collective's send and recv hold the same element type");
    return {kind,        root,        readable(send), writable(recv), send_counts,
            send_displs, recv_counts, recv_displs,    sizeof(T)};
  }
  void v_run(const detail::VSpec& spec, const CallOptions& options);
  Request v_start(const detail::VSpec& spec, const CallOptions& options);

  std::shared_ptr<detail::CommImpl> impl_;
};

}  // namespace lanes

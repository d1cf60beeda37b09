// lanes::Communicator: a group of processes and the collectives they run together.
#pragma once

#include <cstddef>
#include <memory>
#include <ranges>
#include <span>
#include <string>
#include <type_traits>

namespace lanes {

namespace detail {
class CommImpl;
}

// Any contiguous, sized range of trivially copyable elements: std::span<T>, std::vector<T>,
// std::array<T, N>, C arrays.
template <class R>
concept ContiguousData = std::ranges::contiguous_range<R> && std::ranges::sized_range<R> &&
    std::is_trivially_copyable_v<std::ranges::range_value_t<R>>;

// Per-call options. Empty algorithm: the runtime's choice (LANES_<COLL>_ALGORITHM or its default).
struct CallOptions {
  std::string algorithm;
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

  // Collective over this communicator. Processes passing the same color form one new
  // communicator, ordered by key (ties by rank); a negative color gives a null communicator.
  // Shares this process's rails, workers and endpoints: costs an exchange, not new UCX contexts.
  Communicator split(int color, int key) const;

  // Byte versions. bcast: `data` on every rank, the root's is sent. scatter: `send` holds
  // size() blocks of recv.size() bytes at the root and is ignored (may be empty) elsewhere.
  // alltoall: `send` and `recv` hold size() equal blocks.
  void bcast_bytes(std::span<std::byte> data, int root, const CallOptions& options = {});
  void scatter_bytes(std::span<const std::byte> send, std::span<std::byte> recv, int root,
                     const CallOptions& options = {});
  void alltoall_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                      const CallOptions& options = {});

  template <ContiguousData R>
  void bcast(R&& data, int root, const CallOptions& options = {}) {
    bcast_bytes(writable(data), root, options);
  }
  template <ContiguousData S, ContiguousData R>
  void scatter(const S& send, R&& recv, int root, const CallOptions& options = {}) {
    scatter_bytes(readable(send), writable(recv), root, options);
  }
  template <ContiguousData S, ContiguousData R>
  void alltoall(const S& send, R&& recv, const CallOptions& options = {}) {
    alltoall_bytes(readable(send), writable(recv), options);
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

  std::shared_ptr<detail::CommImpl> impl_;
};

}  // namespace lanes

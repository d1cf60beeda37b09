#include "bench_collectives.hpp"

#include <cstdint>
#include <span>
#include <stdexcept>
#include <unordered_map>
#include <vector>

namespace lanes_bench {

namespace {

// Where the buffers come from (--memory): ordinary memory, or the runtime's shared heap.
const lanes::Runtime* g_heap_runtime = nullptr;
std::unordered_map<void*, lanes::Memory> g_blocks;

template <class T>
struct BenchAllocator {
  using value_type = T;
  BenchAllocator() = default;
  template <class U>
  explicit BenchAllocator(const BenchAllocator<U>&) {}
  T* allocate(std::size_t n) {
    if (g_heap_runtime == nullptr) return std::allocator<T>().allocate(n);
    lanes::Memory m = g_heap_runtime->allocate(n * sizeof(T));
    void* p = m.data();
    g_blocks.emplace(p, std::move(m));
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) {
    if (g_blocks.erase(p) == 0) std::allocator<T>().deallocate(p, n);
  }
  bool operator==(const BenchAllocator&) const { return true; }
};
using Ints = std::vector<int, BenchAllocator<int>>;

// The value element `i` of the block that rank `from` sends to rank `to` (-1: every rank) holds
// in the repetition numbered `salt`.
int value(int salt, int from, int to, std::size_t i) {
  std::uint32_t h = static_cast<std::uint32_t>(i) * 2654435761u;
  h ^= static_cast<std::uint32_t>(salt) * 40503u + 0x9e3779b9u;
  h += static_cast<std::uint32_t>(from) * 9973u + static_cast<std::uint32_t>(to + 1) * 7919u;
  h ^= h >> 15;
  return static_cast<int>(h);
}

// Writes block `len` of `from -> to` at `out`; `expected_not`: the complement, never expected.
void write_block(int* out, std::size_t len, int salt, int from, int to, bool expected_not) {
  for (std::size_t i = 0; i < len; ++i) {
    const int v = value(salt, from, to, i);
    out[i] = expected_not ? ~v : v;
  }
}

std::string check_block(const int* got, std::size_t len, int salt, int from, int to,
                        const char* what) {
  for (std::size_t i = 0; i < len; ++i) {
    const int want = value(salt, from, to, i);
    if (got[i] != want) {
      return std::string(what) + " block from rank " + std::to_string(from) + ", element " +
             std::to_string(i) + ": got " + std::to_string(got[i]) + ", expected " +
             std::to_string(want);
    }
  }
  return {};
}

int as_int(std::size_t count) {
  return static_cast<int>(count);
}

class Base : public CollectiveBench {
 public:
  Base(std::size_t count, int root, lanes::Communicator& world, MPI_Comm comm)
      : c_(count), root_(root), me_(world.rank()), p_(world.size()), world_(world), comm_(comm) {}

 protected:
  std::size_t up() const { return static_cast<std::size_t>(p_); }
  std::size_t c_;
  int root_;
  int me_;
  int p_;
  lanes::Communicator& world_;
  MPI_Comm comm_;
};

class Bcast final : public Base {
 public:
  using Base::Base;
  void fill(int salt) override {
    data_.resize(c_);
    write_block(data_.data(), c_, salt, root_, -1, me_ != root_);
  }
  void run_native() override { MPI_Bcast(data_.data(), as_int(c_), MPI_INT, root_, comm_); }
  void run_lanes(const lanes::CallOptions& o) override { world_.bcast(data_, root_, o); }
  std::string verify(int salt) const override {
    return check_block(data_.data(), c_, salt, root_, -1, "bcast data");
  }

 private:
  Ints data_;
};

class Scatter final : public Base {
 public:
  using Base::Base;
  void fill(int salt) override {
    send_.resize(me_ == root_ ? c_ * up() : 0);
    recv_.resize(c_);
    if (me_ == root_) {
      for (int j = 0; j < p_; ++j)
        write_block(send_.data() + c_ * static_cast<std::size_t>(j), c_, salt, root_, j, false);
    }
    write_block(recv_.data(), c_, salt, root_, me_, true);
  }
  void run_native() override {
    MPI_Scatter(send_.data(), as_int(c_), MPI_INT, recv_.data(), as_int(c_), MPI_INT, root_, comm_);
  }
  void run_lanes(const lanes::CallOptions& o) override {
    world_.scatter(std::span<const int>(send_), recv_, root_, o);
  }
  std::string verify(int salt) const override {
    return check_block(recv_.data(), c_, salt, root_, me_, "scatter receive");
  }

 private:
  Ints send_, recv_;
};

class Gather final : public Base {
 public:
  using Base::Base;
  void fill(int salt) override {
    send_.resize(c_);
    recv_.resize(me_ == root_ ? c_ * up() : 0);
    write_block(send_.data(), c_, salt, me_, root_, false);
    if (me_ == root_) {
      for (int j = 0; j < p_; ++j)
        write_block(recv_.data() + c_ * static_cast<std::size_t>(j), c_, salt, j, root_, true);
    }
  }
  void run_native() override {
    MPI_Gather(send_.data(), as_int(c_), MPI_INT, recv_.data(), as_int(c_), MPI_INT, root_, comm_);
  }
  void run_lanes(const lanes::CallOptions& o) override {
    world_.gather(send_, std::span<int>(recv_), root_, o);
  }
  std::string verify(int salt) const override {
    if (me_ != root_) return {};
    for (int j = 0; j < p_; ++j) {
      std::string e = check_block(recv_.data() + c_ * static_cast<std::size_t>(j), c_, salt, j,
                                  root_, "gather receive");
      if (!e.empty()) return e;
    }
    return {};
  }

 private:
  Ints send_, recv_;
};

class Alltoall final : public Base {
 public:
  using Base::Base;
  void fill(int salt) override {
    send_.resize(c_ * up());
    recv_.resize(c_ * up());
    for (int j = 0; j < p_; ++j) {
      write_block(send_.data() + c_ * static_cast<std::size_t>(j), c_, salt, me_, j, false);
      write_block(recv_.data() + c_ * static_cast<std::size_t>(j), c_, salt, j, me_, true);
    }
  }
  void run_native() override {
    MPI_Alltoall(send_.data(), as_int(c_), MPI_INT, recv_.data(), as_int(c_), MPI_INT, comm_);
  }
  void run_lanes(const lanes::CallOptions& o) override { world_.alltoall(send_, recv_, o); }
  std::string verify(int salt) const override {
    for (int j = 0; j < p_; ++j) {
      std::string e = check_block(recv_.data() + c_ * static_cast<std::size_t>(j), c_, salt, j, me_,
                                  "alltoall receive");
      if (!e.empty()) return e;
    }
    return {};
  }

 private:
  Ints send_, recv_;
};

class Allgather final : public Base {
 public:
  using Base::Base;
  void fill(int salt) override {
    send_.resize(c_);
    recv_.resize(c_ * up());
    write_block(send_.data(), c_, salt, me_, -1, false);
    for (int j = 0; j < p_; ++j)
      write_block(recv_.data() + c_ * static_cast<std::size_t>(j), c_, salt, j, -1, true);
  }
  void run_native() override {
    MPI_Allgather(send_.data(), as_int(c_), MPI_INT, recv_.data(), as_int(c_), MPI_INT, comm_);
  }
  void run_lanes(const lanes::CallOptions& o) override { world_.allgather(send_, recv_, o); }
  std::string verify(int salt) const override {
    for (int j = 0; j < p_; ++j) {
      std::string e = check_block(recv_.data() + c_ * static_cast<std::size_t>(j), c_, salt, j, -1,
                                  "allgather receive");
      if (!e.empty()) return e;
    }
    return {};
  }

 private:
  Ints send_, recv_;
};

// The sum of every rank's element i (block to -1), wrapping as int arithmetic in MPI does.
std::uint32_t sum_of(int salt, int p, std::size_t i) {
  std::uint32_t sum = 0;
  for (int r = 0; r < p; ++r) sum += static_cast<std::uint32_t>(value(salt, r, -1, i));
  return sum;
}

std::string check_sum(const int* got, std::size_t len, int salt, int p, const char* what) {
  for (std::size_t i = 0; i < len; ++i) {
    const std::uint32_t want = sum_of(salt, p, i);
    if (static_cast<std::uint32_t>(got[i]) != want) {
      return std::string(what) + " element " + std::to_string(i) + ": got " +
             std::to_string(got[i]) + ", expected " + std::to_string(static_cast<int>(want));
    }
  }
  return {};
}

// MPI_INT sums; the expected sum of every rank's value, wrapping as int arithmetic in MPI does.
class Allreduce final : public Base {
 public:
  using Base::Base;
  void fill(int salt) override {
    send_.resize(c_);
    recv_.assign(c_, 0);
    write_block(send_.data(), c_, salt, me_, -1, false);
  }
  void run_native() override {
    MPI_Allreduce(send_.data(), recv_.data(), as_int(c_), MPI_INT, MPI_SUM, comm_);
  }
  void run_lanes(const lanes::CallOptions& o) override {
    world_.allreduce(send_, recv_, lanes::Op::sum, o);
  }
  std::string verify(int salt) const override {
    return check_sum(recv_.data(), c_, salt, p_, "allreduce");
  }

 private:
  Ints send_, recv_;
};

// MPI_INT sums into the root (--root); the root's receive buffer starts as the complement of the
// sum expected, the other ranks have none (MPI ignores theirs; lanes takes an empty one).
class Reduce final : public Base {
 public:
  using Base::Base;
  void fill(int salt) override {
    send_.resize(c_);
    recv_.resize(me_ == root_ ? c_ : 0);
    write_block(send_.data(), c_, salt, me_, -1, false);
    for (std::size_t i = 0; i < recv_.size(); ++i)
      recv_[i] = ~static_cast<int>(sum_of(salt, p_, i));
  }
  void run_native() override {
    MPI_Reduce(send_.data(), me_ == root_ ? recv_.data() : nullptr, as_int(c_), MPI_INT, MPI_SUM,
               root_, comm_);
  }
  void run_lanes(const lanes::CallOptions& o) override {
    world_.reduce(send_, recv_, lanes::Op::sum, root_, o);
  }
  std::string verify(int salt) const override {
    return me_ == root_ ? check_sum(recv_.data(), c_, salt, p_, "reduce at the root") : "";
  }

 private:
  Ints send_, recv_;
};

}  // namespace

void use_shared_memory(const lanes::Runtime* runtime) {
  g_heap_runtime = runtime;
}

std::size_t buffer_bytes(const std::string& collective, std::size_t count, int rank, int size,
                         int root) {
  const std::size_t all = count * static_cast<std::size_t>(size);
  std::size_t elements = 0;
  if (collective == "bcast")
    elements = count;
  else if (collective == "scatter" || collective == "gather")
    elements = count + (rank == root ? all : 0);
  else if (collective == "alltoall")
    elements = 2 * all;
  else if (collective == "allreduce")
    elements = 2 * count;
  else if (collective == "reduce")
    elements = count + (rank == root ? count : 0);
  else
    elements = count + all;
  return elements * sizeof(int);
}

std::unique_ptr<CollectiveBench> make_bench(const std::string& collective, std::size_t count,
                                            int root, lanes::Communicator& world, MPI_Comm comm) {
  if (collective == "bcast") return std::make_unique<Bcast>(count, root, world, comm);
  if (collective == "scatter") return std::make_unique<Scatter>(count, root, world, comm);
  if (collective == "gather") return std::make_unique<Gather>(count, root, world, comm);
  if (collective == "alltoall") return std::make_unique<Alltoall>(count, root, world, comm);
  if (collective == "allgather") return std::make_unique<Allgather>(count, root, world, comm);
  if (collective == "allreduce") return std::make_unique<Allreduce>(count, root, world, comm);
  if (collective == "reduce") return std::make_unique<Reduce>(count, root, world, comm);
  throw std::invalid_argument("unknown collective " + collective);
}

}  // namespace lanes_bench

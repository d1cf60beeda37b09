// Public entry points of lanes::Runtime.
#include <lanes/lanes.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "algos/registry.hpp"
#include "algos/vcollectives.hpp"
#include "lib/runtime_impl.hpp"
#include "transport/bootstrap/bootstrap.hpp"
#ifdef LANES_HAVE_MPI
#include <lanes/mpi.hpp>

#include "transport/bootstrap/mpi_bootstrap.hpp"
#endif

namespace lanes {

std::vector<std::string> algorithms(std::string_view collective) {
  std::vector<std::string> out;
  for (const algos::Algorithm& a : algos::all_algorithms()) {
    if (collective == algos::to_string(a.coll)) out.emplace_back(a.name);
  }
  for (const algos::VAlgorithm& a : algos::all_valgorithms()) {
    if (collective == algos::to_string(a.coll)) out.emplace_back(a.name);
  }
  return out;
}

Runtime::Runtime(std::shared_ptr<detail::RuntimeImpl> impl) : impl_(std::move(impl)) {}
Runtime::Runtime(Runtime&&) noexcept = default;
Runtime& Runtime::operator=(Runtime&& other) noexcept {
  if (this != &other) {
    if (impl_) impl_->finalize();
    impl_ = std::move(other.impl_);
  }
  return *this;
}
Runtime::~Runtime() {
  if (impl_) impl_->finalize();
}

Runtime Runtime::init() {
  if (transport::pmix_server_present()) {
    return detail::RuntimeImpl::start(transport::make_pmix_bootstrap());
  }
#ifdef LANES_HAVE_MPI
  if (transport::mpi_active()) {
    return detail::RuntimeImpl::start(transport::make_mpi_bootstrap(MPI_COMM_WORLD));
  }
#endif
  return detail::RuntimeImpl::start(transport::make_single_bootstrap());
}

Runtime Runtime::init(AllgatherBootstrap b) {
  return detail::RuntimeImpl::start(transport::make_allgather_bootstrap(
      b.rank, b.size, std::move(b.allgather), std::move(b.node_name)));
}

#ifdef LANES_HAVE_MPI
Runtime mpi::init(MPI_Comm comm) {
  return detail::RuntimeImpl::start(transport::make_mpi_bootstrap(comm));
}
#endif

namespace {
detail::RuntimeImpl& alive(const std::shared_ptr<detail::RuntimeImpl>& impl) {
  if (!impl) throw Error(Errc::finalized, "this Runtime was moved from");
  impl->check_alive();
  return *impl;
}
}  // namespace

Communicator Runtime::world() const {
  return Communicator(alive(impl_).world());
}
void Runtime::finalize() {
  if (impl_) impl_->finalize();
}
std::string Runtime::bootstrap_name() const {
  return alive(impl_).bootstrap_name();
}
int Runtime::num_rails() const {
  return static_cast<int>(alive(impl_).rails().count());
}

Memory Runtime::allocate(std::size_t bytes) const {
  const std::shared_ptr<transport::SharedHeap>& heap = alive(impl_).shared_heap();
  if (heap) {
    if (void* p = heap->allocate(bytes)) {
      // The block keeps the heap: it goes back there even after the runtime ended.
      return Memory(std::shared_ptr<void>(p, [heap](void* q) { heap->release(q); }), bytes, true);
    }
  }
  constexpr std::size_t kPage = transport::SharedHeap::kPage;
  const std::size_t rounded = std::max<std::size_t>((bytes + kPage - 1) / kPage, 1) * kPage;
  void* p = std::aligned_alloc(kPage, rounded);
  if (p == nullptr) {
    throw Error(Errc::resource, "allocate(): no memory for " + std::to_string(bytes) + " bytes");
  }
  std::memset(p, 0, rounded);
  return Memory(std::shared_ptr<void>(p, [](void* q) { std::free(q); }), bytes, false);
}

std::string Runtime::describe() const {
  return alive(impl_).describe();
}
std::string Runtime::describe_json() const {
  return alive(impl_).describe_json();
}

}  // namespace lanes

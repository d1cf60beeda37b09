// Public entry points of lanes::Communicator: each call becomes a CommImpl::Call.
#include <lanes/lanes.hpp>

#include "lib/comm_impl.hpp"
#include "lib/plan_state.hpp"
#include "lib/runtime_impl.hpp"

namespace lanes {

using algos::Collective;
using Call = detail::CommImpl::Call;
using detail::usable;

namespace detail {
CommImpl& usable(const std::shared_ptr<CommImpl>& impl) {
  if (!impl) {
    throw Error(Errc::invalid_argument,
                "null communicator (split() with a negative color gives one): it has no ranks");
  }
  impl->runtime().check_alive();
  return *impl;
}
}  // namespace detail

namespace {

Call make(Collective coll, int root, std::span<const std::byte> send, std::span<std::byte> recv,
          const CallOptions& options) {
  return Call{coll, root, send, recv, options};
}

// A typed alltoall: its blocks must hold whole elements of `unit` bytes.
Call make_alltoall(std::span<const std::byte> send, std::span<std::byte> recv, std::size_t unit,
                   const CallOptions& options) {
  Call call{Collective::alltoall, 0, send, recv, options};
  call.unit = unit;
  return call;
}

Call make_reduction(Collective coll, int root, std::span<const std::byte> send,
                    std::span<std::byte> recv, Datatype type, Op op, const CallOptions& options) {
  Call call{coll, root, send, recv, options};
  call.type = type;
  call.op = op;
  return call;
}

Call make_user_reduction(Collective coll, int root, std::span<const std::byte> send,
                         std::span<std::byte> recv, UserOpBytes&& op, const CallOptions& options) {
  Call call{coll, root, send, recv, options};
  call.user_op = std::make_shared<const UserOpBytes>(std::move(op));
  return call;
}

}  // namespace

int Communicator::rank() const {
  return usable(impl_).rank();
}
int Communicator::size() const {
  return usable(impl_).size();
}
int Communicator::node_rank() const {
  return usable(impl_).local_rank();
}
int Communicator::node_size() const {
  const auto& c = usable(impl_);
  return c.layout().node_size_of(c.rank());
}
int Communicator::num_nodes() const {
  return usable(impl_).layout().num_nodes();
}
int Communicator::node() const {
  const auto& c = usable(impl_);
  return c.layout().node_of[static_cast<std::size_t>(c.rank())];
}

Communicator Communicator::split(int color, int key) const {
  return Communicator(usable(impl_).split(color, key));
}

Communicator Communicator::group(std::span<const int> ranks, const Exchange& exchange) const {
  return Communicator(usable(impl_).group(ranks, exchange));
}

// Blocking --------------------------------------------------------------------------------------
void Communicator::bcast_bytes(std::span<std::byte> data, int root, const CallOptions& o) {
  usable(impl_).run(make(Collective::bcast, root, {}, data, o));
}
void Communicator::scatter_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                                 int root, const CallOptions& o) {
  usable(impl_).run(make(Collective::scatter, root, send, recv, o));
}
void Communicator::gather_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                                int root, const CallOptions& o) {
  usable(impl_).run(make(Collective::gather, root, send, recv, o));
}
void Communicator::alltoall_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                                  const CallOptions& o) {
  usable(impl_).run(make(Collective::alltoall, 0, send, recv, o));
}
void Communicator::alltoall_elements(std::span<const std::byte> send, std::span<std::byte> recv,
                                     std::size_t unit, const CallOptions& o) {
  usable(impl_).run(make_alltoall(send, recv, unit, o));
}
void Communicator::allgather_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                                   const CallOptions& o) {
  usable(impl_).run(make(Collective::allgather, 0, send, recv, o));
}
void Communicator::reduce_scatter_block_bytes(std::span<const std::byte> send,
                                              std::span<std::byte> recv, Datatype type, Op op,
                                              const CallOptions& o) {
  usable(impl_).run(make_reduction(Collective::reduce_scatter_block, 0, send, recv, type, op, o));
}
void Communicator::barrier(const CallOptions& o) {
  usable(impl_).run(make(Collective::barrier, 0, {}, {}, o));
}
void Communicator::reduce_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                                Datatype type, Op op, int root, const CallOptions& o) {
  usable(impl_).run(make_reduction(Collective::reduce, root, send, recv, type, op, o));
}
void Communicator::allreduce_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                                   Datatype type, Op op, const CallOptions& o) {
  usable(impl_).run(make_reduction(Collective::allreduce, 0, send, recv, type, op, o));
}

void Communicator::reduce_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                                UserOpBytes op, int root, const CallOptions& o) {
  usable(impl_).run(make_user_reduction(Collective::reduce, root, send, recv, std::move(op), o));
}
void Communicator::allreduce_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                                   UserOpBytes op, const CallOptions& o) {
  usable(impl_).run(make_user_reduction(Collective::allreduce, 0, send, recv, std::move(op), o));
}
void Communicator::reduce_scatter_block_bytes(std::span<const std::byte> send,
                                              std::span<std::byte> recv, UserOpBytes op,
                                              const CallOptions& o) {
  usable(impl_).run(
      make_user_reduction(Collective::reduce_scatter_block, 0, send, recv, std::move(op), o));
}

// Nonblocking -----------------------------------------------------------------------------------
namespace {
Request start(const std::shared_ptr<detail::CommImpl>& impl, const Call& call) {
  detail::CommImpl& c = usable(impl);
  return detail::make_request(c.start(c.prepare_call(call)));
}
}  // namespace

Request Communicator::ibcast_bytes(std::span<std::byte> data, int root, const CallOptions& o) {
  return start(impl_, make(Collective::bcast, root, {}, data, o));
}
Request Communicator::iscatter_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                                     int root, const CallOptions& o) {
  return start(impl_, make(Collective::scatter, root, send, recv, o));
}
Request Communicator::igather_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                                    int root, const CallOptions& o) {
  return start(impl_, make(Collective::gather, root, send, recv, o));
}
Request Communicator::ialltoall_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                                      const CallOptions& o) {
  return start(impl_, make(Collective::alltoall, 0, send, recv, o));
}
Request Communicator::ialltoall_elements(std::span<const std::byte> send, std::span<std::byte> recv,
                                         std::size_t unit, const CallOptions& o) {
  return start(impl_, make_alltoall(send, recv, unit, o));
}
Request Communicator::iallgather_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                                       const CallOptions& o) {
  return start(impl_, make(Collective::allgather, 0, send, recv, o));
}
Request Communicator::ireduce_scatter_block_bytes(std::span<const std::byte> send,
                                                  std::span<std::byte> recv, Datatype type, Op op,
                                                  const CallOptions& o) {
  return start(impl_, make_reduction(Collective::reduce_scatter_block, 0, send, recv, type, op, o));
}
Request Communicator::ibarrier(const CallOptions& o) {
  return start(impl_, make(Collective::barrier, 0, {}, {}, o));
}
Request Communicator::ireduce_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                                    Datatype type, Op op, int root, const CallOptions& o) {
  return start(impl_, make_reduction(Collective::reduce, root, send, recv, type, op, o));
}
Request Communicator::iallreduce_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                                       Datatype type, Op op, const CallOptions& o) {
  return start(impl_, make_reduction(Collective::allreduce, 0, send, recv, type, op, o));
}

Request Communicator::ireduce_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                                    UserOpBytes op, int root, const CallOptions& o) {
  return start(impl_, make_user_reduction(Collective::reduce, root, send, recv, std::move(op), o));
}
Request Communicator::iallreduce_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                                       UserOpBytes op, const CallOptions& o) {
  return start(impl_, make_user_reduction(Collective::allreduce, 0, send, recv, std::move(op), o));
}
Request Communicator::ireduce_scatter_block_bytes(std::span<const std::byte> send,
                                                  std::span<std::byte> recv, UserOpBytes op,
                                                  const CallOptions& o) {
  return start(impl_, make_user_reduction(Collective::reduce_scatter_block, 0, send, recv,
                                          std::move(op), o));
}

// Persistent ------------------------------------------------------------------------------------
namespace {
Plan plan(const std::shared_ptr<detail::CommImpl>& impl, const Call& call) {
  detail::CommImpl& c = usable(impl);
  auto state = std::make_shared<detail::PlanState>();
  state->comm = impl;
  state->prepared = c.prepare_call(call);
  return detail::make_plan(std::move(state));
}
}  // namespace

Plan Communicator::plan_bcast_bytes(std::span<std::byte> data, int root, const CallOptions& o) {
  return plan(impl_, make(Collective::bcast, root, {}, data, o));
}
Plan Communicator::plan_scatter_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                                      int root, const CallOptions& o) {
  return plan(impl_, make(Collective::scatter, root, send, recv, o));
}
Plan Communicator::plan_gather_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                                     int root, const CallOptions& o) {
  return plan(impl_, make(Collective::gather, root, send, recv, o));
}
Plan Communicator::plan_alltoall_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                                       const CallOptions& o) {
  return plan(impl_, make(Collective::alltoall, 0, send, recv, o));
}
Plan Communicator::plan_alltoall_elements(std::span<const std::byte> send,
                                          std::span<std::byte> recv, std::size_t unit,
                                          const CallOptions& o) {
  return plan(impl_, make_alltoall(send, recv, unit, o));
}
Plan Communicator::plan_allgather_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                                        const CallOptions& o) {
  return plan(impl_, make(Collective::allgather, 0, send, recv, o));
}
Plan Communicator::plan_reduce_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                                     Datatype type, Op op, int root, const CallOptions& o) {
  return plan(impl_, make_reduction(Collective::reduce, root, send, recv, type, op, o));
}
Plan Communicator::plan_allreduce_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                                        Datatype type, Op op, const CallOptions& o) {
  return plan(impl_, make_reduction(Collective::allreduce, 0, send, recv, type, op, o));
}

Plan Communicator::plan_reduce_scatter_block_bytes(std::span<const std::byte> send,
                                                   std::span<std::byte> recv, Datatype type, Op op,
                                                   const CallOptions& o) {
  return plan(impl_, make_reduction(Collective::reduce_scatter_block, 0, send, recv, type, op, o));
}

Plan Communicator::plan_reduce_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                                     UserOpBytes op, int root, const CallOptions& o) {
  return plan(impl_, make_user_reduction(Collective::reduce, root, send, recv, std::move(op), o));
}
Plan Communicator::plan_allreduce_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                                        UserOpBytes op, const CallOptions& o) {
  return plan(impl_, make_user_reduction(Collective::allreduce, 0, send, recv, std::move(op), o));
}
Plan Communicator::plan_reduce_scatter_block_bytes(std::span<const std::byte> send,
                                                   std::span<std::byte> recv, UserOpBytes op,
                                                   const CallOptions& o) {
  return plan(impl_, make_user_reduction(Collective::reduce_scatter_block, 0, send, recv,
                                         std::move(op), o));
}

}  // namespace lanes

// Public entry points of the v-variants: each call becomes a detail::VSpec.
#include <lanes/lanes.hpp>

#include "lib/comm_impl.hpp"
#include "lib/runtime_impl.hpp"

namespace lanes {

using detail::usable;
using detail::VKind;
using detail::VSpec;

namespace {

using Sizes = std::span<const std::size_t>;

VSpec bytes_spec(VKind kind, int root, std::span<const std::byte> send, std::span<std::byte> recv,
                 Sizes send_counts, Sizes send_displs, Sizes recv_counts, Sizes recv_displs) {
  return {kind, root, send, recv, send_counts, send_displs, recv_counts, recv_displs, 1};
}

}  // namespace

void Communicator::v_run(const VSpec& spec, const CallOptions& options) {
  usable(impl_).run_v(spec, options);
}

Request Communicator::v_start(const VSpec& spec, const CallOptions& options) {
  return detail::make_request(usable(impl_).start_v(spec, options));
}

void Communicator::scatterv_bytes(std::span<const std::byte> send, Sizes send_counts,
                                  Sizes send_displs, std::span<std::byte> recv, int root,
                                  const CallOptions& o) {
  v_run(bytes_spec(VKind::scatterv, root, send, recv, send_counts, send_displs, {}, {}), o);
}
void Communicator::gatherv_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                                 Sizes recv_counts, Sizes recv_displs, int root,
                                 const CallOptions& o) {
  v_run(bytes_spec(VKind::gatherv, root, send, recv, {}, {}, recv_counts, recv_displs), o);
}
void Communicator::allgatherv_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                                    Sizes recv_counts, Sizes recv_displs, const CallOptions& o) {
  v_run(bytes_spec(VKind::allgatherv, 0, send, recv, {}, {}, recv_counts, recv_displs), o);
}
void Communicator::alltoallv_bytes(std::span<const std::byte> send, Sizes send_counts,
                                   Sizes send_displs, std::span<std::byte> recv, Sizes recv_counts,
                                   Sizes recv_displs, const CallOptions& o) {
  v_run(bytes_spec(VKind::alltoallv, 0, send, recv, send_counts, send_displs, recv_counts,
                   recv_displs),
        o);
}

Request Communicator::iscatterv_bytes(std::span<const std::byte> send, Sizes send_counts,
                                      Sizes send_displs, std::span<std::byte> recv, int root,
                                      const CallOptions& o) {
  return v_start(bytes_spec(VKind::scatterv, root, send, recv, send_counts, send_displs, {}, {}),
                 o);
}
Request Communicator::igatherv_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                                     Sizes recv_counts, Sizes recv_displs, int root,
                                     const CallOptions& o) {
  return v_start(bytes_spec(VKind::gatherv, root, send, recv, {}, {}, recv_counts, recv_displs), o);
}
Request Communicator::iallgatherv_bytes(std::span<const std::byte> send, std::span<std::byte> recv,
                                        Sizes recv_counts, Sizes recv_displs,
                                        const CallOptions& o) {
  return v_start(bytes_spec(VKind::allgatherv, 0, send, recv, {}, {}, recv_counts, recv_displs), o);
}
Request Communicator::ialltoallv_bytes(std::span<const std::byte> send, Sizes send_counts,
                                       Sizes send_displs, std::span<std::byte> recv,
                                       Sizes recv_counts, Sizes recv_displs, const CallOptions& o) {
  return v_start(bytes_spec(VKind::alltoallv, 0, send, recv, send_counts, send_displs, recv_counts,
                            recv_displs),
                 o);
}

}  // namespace lanes

#include "transport/ucx/handles.hpp"

#include <algorithm>
#include <chrono>

namespace lanes::transport {

void UcpEndpoint::close() noexcept {
  if (ep_ == nullptr) return;
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = UCP_EP_CLOSE_FLAG_FORCE;
  void* req = ucp_ep_close_nbx(ep_, &param);
  ep_ = nullptr;
  if (req == nullptr || UCS_PTR_IS_ERR(req)) return;
  // A forced close completes locally; bound the wait anyway so a broken peer cannot hang us.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (ucp_request_check_status(req) == UCS_INPROGRESS &&
         std::chrono::steady_clock::now() < deadline) {
    ucp_worker_progress(worker_);
  }
  ucp_request_free(req);
}

void drain_unexpected(ucp_worker_h w) noexcept {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  // A message longer than this is received truncated (UCS_ERR_MESSAGE_TRUNCATED): dropped all
  // the same, without allocating in a destructor.
  char sink[4096];
  for (int progressed = 0; progressed < 64 && std::chrono::steady_clock::now() < deadline;) {
    ucp_tag_recv_info_t info{};
    ucp_tag_message_h msg = ucp_tag_probe_nb(w, 0, 0, 1, &info);
    if (msg == nullptr) {
      // Nothing waiting: a few passes of progress may still deliver what is in flight.
      progressed += ucp_worker_progress(w) == 0 ? 16 : 1;
      continue;
    }
    ucp_request_param_t param{};
    void* req = ucp_tag_msg_recv_nbx(w, sink, std::min(info.length, sizeof sink), msg, &param);
    if (req == nullptr || UCS_PTR_IS_ERR(req)) continue;
    while (ucp_request_check_status(req) == UCS_INPROGRESS &&
           std::chrono::steady_clock::now() < deadline) {
      ucp_worker_progress(w);
    }
    if (ucp_request_check_status(req) == UCS_INPROGRESS) {
      ucp_request_cancel(w, req);
      ucp_worker_progress(w);
    }
    ucp_request_free(req);
  }
}

std::string ucs_error_text(ucs_status_t status) {
  return ucs_status_string(status);
}

}  // namespace lanes::transport

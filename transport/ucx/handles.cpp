#include "transport/ucx/handles.hpp"

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

std::string ucs_error_text(ucs_status_t status) {
  return ucs_status_string(status);
}

}  // namespace lanes::transport

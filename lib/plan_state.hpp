// What a lanes::Request and a lanes::Plan hold.
#pragma once

#include <memory>

#include <lanes/request.hpp>

#include "lib/comm_impl.hpp"
#include "lib/executor.hpp"

namespace lanes::detail {

struct PlanState {
  std::shared_ptr<CommImpl> comm;
  CommImpl::Prepared prepared;
  std::shared_ptr<Execution> running;  // the current start, if any
};

}  // namespace lanes::detail

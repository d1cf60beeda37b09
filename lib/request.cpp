// lanes::Request and lanes::Plan: progress through the runtime's engine.
#include <lanes/lanes.hpp>

#include "lib/plan_state.hpp"
#include "lib/runtime_impl.hpp"

namespace lanes {

namespace detail {

Request make_request(std::shared_ptr<Execution> ex) {
  return Request(std::move(ex));
}
Plan make_plan(std::shared_ptr<PlanState> state) {
  return Plan(std::move(state));
}

}  // namespace detail

bool Request::test() {
  if (!ex_) return true;
  ex_->comm().runtime().check_alive();
  return ex_->comm().runtime().test(*ex_);
}

void Request::wait() {
  if (!ex_) return;
  ex_->comm().runtime().check_alive();
  ex_->comm().runtime().wait(*ex_);
}

void Plan::start() {
  if (!state_) throw Error(Errc::invalid_argument, "this Plan is empty (default-constructed)");
  if (state_->running && !state_->running->finished()) {
    throw Error(Errc::invalid_argument,
                "Plan::start() while the previous start is still running: wait() for it first");
  }
  state_->comm->reclaim(std::move(state_->running));
  state_->running = state_->comm->start(state_->prepared);
}

bool Plan::test() {
  return state_ ? Request(state_->running).test() : true;
}

void Plan::wait() {
  if (state_) Request(state_->running).wait();
}

}  // namespace lanes

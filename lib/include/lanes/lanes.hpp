// lanes: multi-lane collectives over UCX rails and node shared memory.
//
//   auto rt = lanes::Runtime::init();
//   lanes::Communicator world = rt.world();
//   world.bcast(std::span(data), /*root=*/0);
#pragma once

#include <lanes/communicator.hpp>
#include <lanes/error.hpp>
#include <lanes/memory.hpp>
#include <lanes/runtime.hpp>

// Nonblocking collectives lanes serves, as MPI requests. Each is a generalized request
// (MPI_Grequest_start) that the MPI library completes and frees as usual, so the program's
// MPI_Wait, MPI_Test and the rest of that family take it with any other request. liblanes_mpi
// interposes that family: while any lanes request is outstanding, each call progresses them all
// and completes those whose collective finished (staged receive data unpacked,
// MPI_Grequest_complete) before it hands its arguments to the MPI library; the waiting forms
// poll lanes and the MPI library by turns, so neither side's progress waits on the other.
// With none outstanding, every call goes straight to the MPI library.
#pragma once

#include <mpi.h>

#include <functional>
#include <lanes/lanes.hpp>
#include <memory>
#include <utility>
#include <vector>

namespace lanes::mpi_interpose {

// What a served nonblocking call leaves behind until it completes: the lanes request, the
// buffers it reads and writes (staging, private copies), and what to do once it finished.
struct Started {
  lanes::Request request;
  std::vector<std::shared_ptr<void>> keep;  // alive until completion
  std::function<void()> finish;             // unpacks staged receive data; may be empty
};

// A T made from `args`, kept alive by `s` until its call completes.
template <class T, class... A>
std::shared_ptr<T> hold(Started& s, A&&... args) {
  auto p = std::make_shared<T>(std::forward<A>(args)...);
  s.keep.push_back(p);
  return p;
}

// Makes `*request` the MPI request of a nonblocking collective lanes started on `comm`.
void track(Started started, MPI_Comm comm, const char* function, MPI_Request* request);

}  // namespace lanes::mpi_interpose

// The MPI entry points liblanes_mpi defines. Each asks whether lanes serves the call (the same
// answer on every rank of the communicator), turns the buffers into contiguous bytes and runs the
// lanes collective; otherwise it forwards to PMPI_*. MPI_Init and MPI_Finalize start and stop
// lanes around the MPI library's own.
#include <mpi.h>

#include <cstddef>
#include <exception>
#include <span>
#include <vector>

#include "mpi/staging.hpp"
#include "mpi/state.hpp"

namespace {

using lanes::mpi_interpose::Coll;
using lanes::mpi_interpose::RecvBytes;
using lanes::mpi_interpose::SendBytes;
using lanes::mpi_interpose::TypedBuffer;

// One interposed call: `serve(lanes_comm)` when lanes serves it, else `forward()` (PMPI_*);
// an exception becomes an MPI error raised through comm's error handler.
template <class Serve, class Forward>
int intercept(Coll coll, MPI_Comm comm, const char* function, Serve serve, Forward forward) {
  try {
    lanes::Communicator* lc = lanes::mpi_interpose::serving(coll, comm);
    if (lc == nullptr) {
      lanes::mpi_interpose::count_fallback();
      return forward();
    }
    serve(*lc);
    lanes::mpi_interpose::count_served(coll);
    return MPI_SUCCESS;
  } catch (...) {
    return lanes::mpi_interpose::raise_error(comm, function);
  }
}

// A private copy of bytes that may alias the receive buffer (MPI_IN_PLACE).
std::vector<std::byte> copy_of(std::span<const std::byte> b) {
  return std::vector<std::byte>(b.begin(), b.end());
}

// The bytes of this rank's own block of a receive buffer laid out by (count, type).
std::vector<std::byte> own_block(const void* recvbuf, int count, MPI_Datatype type, int rank,
                                 MPI_Comm comm) {
  const void* own = lanes::mpi_interpose::block_address(recvbuf, count, type, rank);
  return copy_of(SendBytes({own, count, type, 1}, comm).bytes());
}

}  // namespace

extern "C" {

int MPI_Init(int* argc, char*** argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc != MPI_SUCCESS) return rc;
  int provided = MPI_THREAD_SINGLE;
  PMPI_Query_thread(&provided);
  lanes::mpi_interpose::start(provided);
  return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc != MPI_SUCCESS) return rc;
  lanes::mpi_interpose::start(*provided);
  return rc;
}

int MPI_Finalize(void) {
  lanes::mpi_interpose::stop();
  return PMPI_Finalize();
}

int MPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return intercept(
      Coll::bcast, comm, "MPI_Bcast",
      [&](lanes::Communicator& lc) {
        const TypedBuffer b{buffer, count, datatype, 1};
        if (lc.rank() == root) {
          SendBytes data(b, comm);
          const std::span<const std::byte> in = data.bytes();
          // The root's data is only read.
          lc.bcast_bytes(std::span(const_cast<std::byte*>(in.data()), in.size()), root);
        } else {
          RecvBytes data(b, comm);
          lc.bcast_bytes(data.bytes(), root);
          data.finish();
        }
      },
      [&] { return PMPI_Bcast(buffer, count, datatype, root, comm); });
}

int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return intercept(
      Coll::scatter, comm, "MPI_Scatter",
      [&](lanes::Communicator& lc) {
        if (lc.rank() != root) {
          RecvBytes recv({recvbuf, recvcount, recvtype, 1}, comm);
          lc.scatter_bytes({}, recv.bytes(), root);
          recv.finish();
          return;
        }
        SendBytes send({sendbuf, sendcount, sendtype, lc.size()}, comm);
        if (recvbuf == MPI_IN_PLACE) {
          // The root's own block stays where it is: receive it into scratch.
          std::vector<std::byte> scratch(send.bytes().size() / static_cast<std::size_t>(lc.size()));
          lc.scatter_bytes(send.bytes(), scratch, root);
        } else {
          RecvBytes recv({recvbuf, recvcount, recvtype, 1}, comm);
          lc.scatter_bytes(send.bytes(), recv.bytes(), root);
          recv.finish();
        }
      },
      [&] {
        return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
      });
}

int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return intercept(
      Coll::gather, comm, "MPI_Gather",
      [&](lanes::Communicator& lc) {
        if (lc.rank() != root) {
          SendBytes send({sendbuf, sendcount, sendtype, 1}, comm);
          lc.gather_bytes(send.bytes(), {}, root);
          return;
        }
        RecvBytes recv({recvbuf, recvcount, recvtype, lc.size()}, comm);
        if (sendbuf == MPI_IN_PLACE) {
          // The root's contribution already sits in its own block of recvbuf.
          lc.gather_bytes(own_block(recvbuf, recvcount, recvtype, root, comm), recv.bytes(), root);
        } else {
          SendBytes send({sendbuf, sendcount, sendtype, 1}, comm);
          lc.gather_bytes(send.bytes(), recv.bytes(), root);
        }
        recv.finish();
      },
      [&] {
        return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
      });
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return intercept(
      Coll::alltoall, comm, "MPI_Alltoall",
      [&](lanes::Communicator& lc) {
        RecvBytes recv({recvbuf, recvcount, recvtype, lc.size()}, comm);
        if (sendbuf == MPI_IN_PLACE) {
          // The data to send is in recvbuf, laid out by recvcount and recvtype.
          lc.alltoall_bytes(
              copy_of(SendBytes({recvbuf, recvcount, recvtype, lc.size()}, comm).bytes()),
              recv.bytes());
        } else {
          SendBytes send({sendbuf, sendcount, sendtype, lc.size()}, comm);
          lc.alltoall_bytes(send.bytes(), recv.bytes());
        }
        recv.finish();
      },
      [&] {
        return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
      });
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return intercept(
      Coll::allgather, comm, "MPI_Allgather",
      [&](lanes::Communicator& lc) {
        RecvBytes recv({recvbuf, recvcount, recvtype, lc.size()}, comm);
        if (sendbuf == MPI_IN_PLACE) {
          // This rank's contribution already sits in its own block of recvbuf.
          lc.allgather_bytes(own_block(recvbuf, recvcount, recvtype, lc.rank(), comm),
                             recv.bytes());
        } else {
          SendBytes send({sendbuf, sendcount, sendtype, 1}, comm);
          lc.allgather_bytes(send.bytes(), recv.bytes());
        }
        recv.finish();
      },
      [&] {
        return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
      });
}

}  // extern "C"

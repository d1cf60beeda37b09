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

using lanes::mpi_interpose::Coll;
using lanes::mpi_interpose::RecvBytes;
using lanes::mpi_interpose::SendBytes;
using lanes::mpi_interpose::TypedBuffer;

namespace {

// A private copy of bytes that may alias the receive buffer (MPI_IN_PLACE).
std::vector<std::byte> copy_of(std::span<const std::byte> b) {
  return std::vector<std::byte>(b.begin(), b.end());
}

int comm_size(const lanes::Communicator& c) {
  return c.size();
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
  try {
    lanes::Communicator* lc = lanes::mpi_interpose::serving(Coll::bcast, comm);
    if (lc == nullptr) {
      lanes::mpi_interpose::count_fallback();
      return PMPI_Bcast(buffer, count, datatype, root, comm);
    }
    const TypedBuffer b{buffer, count, datatype, 1};
    if (lc->rank() == root) {
      SendBytes data(b, comm);
      const std::span<const std::byte> in = data.bytes();
      // The root's data is only read.
      lc->bcast_bytes(std::span(const_cast<std::byte*>(in.data()), in.size()), root);
    } else {
      RecvBytes data(b, comm);
      lc->bcast_bytes(data.bytes(), root);
      data.finish();
    }
    lanes::mpi_interpose::count_served(Coll::bcast);
    return MPI_SUCCESS;
  } catch (...) {
    return lanes::mpi_interpose::raise_error(comm, "MPI_Bcast");
  }
}

int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  try {
    lanes::Communicator* lc = lanes::mpi_interpose::serving(Coll::scatter, comm);
    if (lc == nullptr) {
      lanes::mpi_interpose::count_fallback();
      return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    }
    if (lc->rank() == root) {
      SendBytes send({sendbuf, sendcount, sendtype, comm_size(*lc)}, comm);
      if (recvbuf == MPI_IN_PLACE) {
        // The root's own block stays where it is: receive it into scratch.
        std::vector<std::byte> scratch(send.bytes().size() / static_cast<std::size_t>(lc->size()));
        lc->scatter_bytes(send.bytes(), scratch, root);
      } else {
        RecvBytes recv({recvbuf, recvcount, recvtype, 1}, comm);
        lc->scatter_bytes(send.bytes(), recv.bytes(), root);
        recv.finish();
      }
    } else {
      RecvBytes recv({recvbuf, recvcount, recvtype, 1}, comm);
      lc->scatter_bytes({}, recv.bytes(), root);
      recv.finish();
    }
    lanes::mpi_interpose::count_served(Coll::scatter);
    return MPI_SUCCESS;
  } catch (...) {
    return lanes::mpi_interpose::raise_error(comm, "MPI_Scatter");
  }
}

int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  try {
    lanes::Communicator* lc = lanes::mpi_interpose::serving(Coll::gather, comm);
    if (lc == nullptr) {
      lanes::mpi_interpose::count_fallback();
      return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    }
    if (lc->rank() == root) {
      RecvBytes recv({recvbuf, recvcount, recvtype, comm_size(*lc)}, comm);
      if (sendbuf == MPI_IN_PLACE) {
        // The root's contribution already sits in its own block of recvbuf.
        const void* own = lanes::mpi_interpose::block_address(recvbuf, recvcount, recvtype, root);
        const std::vector<std::byte> mine =
            copy_of(SendBytes({own, recvcount, recvtype, 1}, comm).bytes());
        lc->gather_bytes(mine, recv.bytes(), root);
      } else {
        SendBytes send({sendbuf, sendcount, sendtype, 1}, comm);
        lc->gather_bytes(send.bytes(), recv.bytes(), root);
      }
      recv.finish();
    } else {
      SendBytes send({sendbuf, sendcount, sendtype, 1}, comm);
      lc->gather_bytes(send.bytes(), {}, root);
    }
    lanes::mpi_interpose::count_served(Coll::gather);
    return MPI_SUCCESS;
  } catch (...) {
    return lanes::mpi_interpose::raise_error(comm, "MPI_Gather");
  }
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  try {
    lanes::Communicator* lc = lanes::mpi_interpose::serving(Coll::alltoall, comm);
    if (lc == nullptr) {
      lanes::mpi_interpose::count_fallback();
      return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    }
    const int p = comm_size(*lc);
    RecvBytes recv({recvbuf, recvcount, recvtype, p}, comm);
    if (sendbuf == MPI_IN_PLACE) {
      // The data to send is in recvbuf, laid out by recvcount and recvtype.
      const std::vector<std::byte> send =
          copy_of(SendBytes({recvbuf, recvcount, recvtype, p}, comm).bytes());
      lc->alltoall_bytes(send, recv.bytes());
    } else {
      SendBytes send({sendbuf, sendcount, sendtype, p}, comm);
      lc->alltoall_bytes(send.bytes(), recv.bytes());
    }
    recv.finish();
    lanes::mpi_interpose::count_served(Coll::alltoall);
    return MPI_SUCCESS;
  } catch (...) {
    return lanes::mpi_interpose::raise_error(comm, "MPI_Alltoall");
  }
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  try {
    lanes::Communicator* lc = lanes::mpi_interpose::serving(Coll::allgather, comm);
    if (lc == nullptr) {
      lanes::mpi_interpose::count_fallback();
      return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    }
    RecvBytes recv({recvbuf, recvcount, recvtype, comm_size(*lc)}, comm);
    if (sendbuf == MPI_IN_PLACE) {
      // This rank's contribution already sits in its own block of recvbuf.
      const void* own =
          lanes::mpi_interpose::block_address(recvbuf, recvcount, recvtype, lc->rank());
      const std::vector<std::byte> mine =
          copy_of(SendBytes({own, recvcount, recvtype, 1}, comm).bytes());
      lc->allgather_bytes(mine, recv.bytes());
    } else {
      SendBytes send({sendbuf, sendcount, sendtype, 1}, comm);
      lc->allgather_bytes(send.bytes(), recv.bytes());
    }
    recv.finish();
    lanes::mpi_interpose::count_served(Coll::allgather);
    return MPI_SUCCESS;
  } catch (...) {
    return lanes::mpi_interpose::raise_error(comm, "MPI_Allgather");
  }
}

}  // extern "C"

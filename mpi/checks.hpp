// The argument checks of the data movers, shared by their blocking and nonblocking forms: each
// checks only what the standard makes significant on this rank (mpi/arguments.hpp).
#pragma once

#include <mpi.h>

#include "mpi/arguments.hpp"

namespace lanes::mpi_interpose {

inline void check_bcast(Arguments& a, const void* buffer, int count, MPI_Datatype datatype,
                        int root) {
  a.root(root);
  a.data("buffer", buffer, "count", count, "datatype", datatype);
}

inline void check_scatter(Arguments& a, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                          const void* recvbuf, int recvcount, MPI_Datatype recvtype, int root) {
  a.root(root);
  if (a.rank() == root) {
    a.data("sendbuf", sendbuf, "sendcount", sendcount, "sendtype", sendtype, a.size());
  }
  // MPI_IN_PLACE at the root: recvcount and recvtype are not significant.
  if (a.rank() != root || recvbuf != MPI_IN_PLACE) {
    a.data("recvbuf", recvbuf, "recvcount", recvcount, "recvtype", recvtype);
  }
}

inline void check_gather(Arguments& a, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                         const void* recvbuf, int recvcount, MPI_Datatype recvtype, int root) {
  a.root(root);
  // MPI_IN_PLACE at the root: sendcount and sendtype are not significant.
  if (a.rank() != root || sendbuf != MPI_IN_PLACE) {
    a.data("sendbuf", sendbuf, "sendcount", sendcount, "sendtype", sendtype);
  }
  if (a.rank() == root) {
    a.data("recvbuf", recvbuf, "recvcount", recvcount, "recvtype", recvtype, a.size());
  }
}

// alltoall: `send_blocks` is size() (allgather: 1).
inline void check_exchange(Arguments& a, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                           const void* recvbuf, int recvcount, MPI_Datatype recvtype,
                           int send_blocks) {
  if (sendbuf != MPI_IN_PLACE) {
    a.data("sendbuf", sendbuf, "sendcount", sendcount, "sendtype", sendtype, send_blocks);
  }
  a.data("recvbuf", recvbuf, "recvcount", recvcount, "recvtype", recvtype, a.size());
}

}  // namespace lanes::mpi_interpose

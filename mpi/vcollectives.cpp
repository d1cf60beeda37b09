// MPI_Scatterv, MPI_Gatherv, MPI_Allgatherv and MPI_Alltoallv and their nonblocking forms. Each
// starts lanes' nonblocking v-collective over contiguous views of the buffers (mpi/vstaging.hpp);
// the blocking form waits for it at once, the nonblocking one hands it to the MPI program as a
// request (mpi/requests.hpp).
#include <mpi.h>

#include <memory>
#include <span>
#include <vector>

#include "mpi/datatypes.hpp"
#include "mpi/intercept.hpp"
#include "mpi/requests.hpp"
#include "mpi/vstaging.hpp"

namespace {

using namespace lanes::mpi_interpose;
using Bytes = std::vector<std::byte>;

// Runs a started call to the end (the blocking forms).
void complete(Started s) {
  s.request.wait();
  if (s.finish) s.finish();
}

// The bytes of block `rank` of a v-buffer (an MPI_IN_PLACE contribution).
Bytes own_vblock(const void* buf, const int* counts, const int* displs, MPI_Datatype type, int rank,
                 MPI_Comm comm) {
  MPI_Aint lb = 0, extent = 0;
  PMPI_Type_get_extent(type, &lb, &extent);
  const auto* at =
      static_cast<const std::byte*>(buf) + static_cast<MPI_Aint>(displs[rank]) * extent;
  return copy_of(SendBytes({at, counts[rank], type, 1}, comm).bytes());
}

Started scatterv(lanes::Communicator& lc, const void* sendbuf, const int* sendcounts,
                 const int* displs, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm) {
  Started s;
  std::span<std::byte> recv;
  if (lc.rank() == root && recvbuf == MPI_IN_PLACE) {
    // The root's own block stays where it is: receive it into scratch.
    recv = *hold<Bytes>(s, static_cast<std::size_t>(sendcounts[root]) *
                               static_cast<std::size_t>(type_shape(sendtype).size));
  } else {
    auto r = hold<RecvBytes>(s, TypedBuffer{recvbuf, recvcount, recvtype, 1}, comm);
    recv = r->bytes();
    s.finish = [r] { r->finish(); };
  }
  if (lc.rank() == root) {
    auto send =
        hold<VSendBytes>(s, VTypedBuffer{sendbuf, sendcounts, displs, sendtype, lc.size()}, comm);
    s.request =
        lc.iscatterv_bytes(send->bytes(), send->blocks().counts, send->blocks().displs, recv, root);
  } else {
    s.request = lc.iscatterv_bytes({}, {}, {}, recv, root);
  }
  return s;
}

Started gatherv(lanes::Communicator& lc, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                void* recvbuf, const int* recvcounts, const int* displs, MPI_Datatype recvtype,
                int root, MPI_Comm comm) {
  Started s;
  std::span<const std::byte> send;
  if (lc.rank() == root && sendbuf == MPI_IN_PLACE) {
    send = *hold<Bytes>(s, own_vblock(recvbuf, recvcounts, displs, recvtype, root, comm));
  } else {
    send = hold<SendBytes>(s, TypedBuffer{sendbuf, sendcount, sendtype, 1}, comm)->bytes();
  }
  if (lc.rank() == root) {
    auto recv =
        hold<VRecvBytes>(s, VTypedBuffer{recvbuf, recvcounts, displs, recvtype, lc.size()}, comm);
    s.request =
        lc.igatherv_bytes(send, recv->bytes(), recv->blocks().counts, recv->blocks().displs, root);
    s.finish = [recv] { recv->finish(); };
  } else {
    s.request = lc.igatherv_bytes(send, {}, {}, {}, root);
  }
  return s;
}

Started allgatherv(lanes::Communicator& lc, const void* sendbuf, int sendcount,
                   MPI_Datatype sendtype, void* recvbuf, const int* recvcounts, const int* displs,
                   MPI_Datatype recvtype, MPI_Comm comm) {
  Started s;
  std::span<const std::byte> send;
  if (sendbuf == MPI_IN_PLACE) {
    send = *hold<Bytes>(s, own_vblock(recvbuf, recvcounts, displs, recvtype, lc.rank(), comm));
  } else {
    send = hold<SendBytes>(s, TypedBuffer{sendbuf, sendcount, sendtype, 1}, comm)->bytes();
  }
  auto recv =
      hold<VRecvBytes>(s, VTypedBuffer{recvbuf, recvcounts, displs, recvtype, lc.size()}, comm);
  s.request =
      lc.iallgatherv_bytes(send, recv->bytes(), recv->blocks().counts, recv->blocks().displs);
  s.finish = [recv] { recv->finish(); };
  return s;
}

Started alltoallv(lanes::Communicator& lc, const void* sendbuf, const int* sendcounts,
                  const int* sdispls, MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
                  const int* rdispls, MPI_Datatype recvtype, MPI_Comm comm) {
  Started s;
  auto recv =
      hold<VRecvBytes>(s, VTypedBuffer{recvbuf, recvcounts, rdispls, recvtype, lc.size()}, comm);
  // MPI_IN_PLACE: the data to send is in recvbuf, laid out by the receive arguments; a copy of
  // it, since the receives overwrite it.
  const VTypedBuffer from = sendbuf == MPI_IN_PLACE
                                ? VTypedBuffer{recvbuf, recvcounts, rdispls, recvtype, lc.size()}
                                : VTypedBuffer{sendbuf, sendcounts, sdispls, sendtype, lc.size()};
  auto send = hold<VSendBytes>(s, from, comm);
  std::span<const std::byte> out = send->bytes();
  if (sendbuf == MPI_IN_PLACE) out = *hold<Bytes>(s, copy_of(out));
  s.request = lc.ialltoallv_bytes(out, send->blocks().counts, send->blocks().displs, recv->bytes(),
                                  recv->blocks().counts, recv->blocks().displs);
  s.finish = [recv] { recv->finish(); };
  return s;
}

// The argument checks, the same for the blocking and the nonblocking form.
void check_scatterv(Arguments& a, const void* sendbuf, const int* sendcounts, const int* displs,
                    MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                    int root) {
  a.root(root);
  if (a.rank() == root) {
    a.vdata("sendbuf", sendbuf, "sendcounts", sendcounts, "displs", displs, "sendtype", sendtype);
  }
  if (a.rank() != root || recvbuf != MPI_IN_PLACE) {
    a.data("recvbuf", recvbuf, "recvcount", recvcount, "recvtype", recvtype);
  }
}

void check_gatherv(Arguments& a, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                   void* recvbuf, const int* recvcounts, const int* displs, MPI_Datatype recvtype,
                   int root) {
  a.root(root);
  if (a.rank() != root || sendbuf != MPI_IN_PLACE) {
    a.data("sendbuf", sendbuf, "sendcount", sendcount, "sendtype", sendtype);
  }
  if (a.rank() == root) {
    a.vdata("recvbuf", recvbuf, "recvcounts", recvcounts, "displs", displs, "recvtype", recvtype);
  }
}

void check_allgatherv(Arguments& a, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                      void* recvbuf, const int* recvcounts, const int* displs,
                      MPI_Datatype recvtype) {
  if (sendbuf != MPI_IN_PLACE)
    a.data("sendbuf", sendbuf, "sendcount", sendcount, "sendtype", sendtype);
  a.vdata("recvbuf", recvbuf, "recvcounts", recvcounts, "displs", displs, "recvtype", recvtype);
}

void check_alltoallv(Arguments& a, const void* sendbuf, const int* sendcounts, const int* sdispls,
                     MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
                     const int* rdispls, MPI_Datatype recvtype) {
  if (sendbuf != MPI_IN_PLACE) {
    a.vdata("sendbuf", sendbuf, "sendcounts", sendcounts, "sdispls", sdispls, "sendtype", sendtype);
  }
  a.vdata("recvbuf", recvbuf, "recvcounts", recvcounts, "rdispls", rdispls, "recvtype", recvtype);
}

}  // namespace

extern "C" {

int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm) {
  return intercept(
      Coll::scatterv, comm, "MPI_Scatterv",
      [&](Arguments& a) {
        check_scatterv(a, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                       root);
      },
      [&](lanes::Communicator& lc) {
        complete(scatterv(lc, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                          root, comm));
      },
      [&] {
        return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                             root, comm);
      });
}

int MPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Request* request) {
  return intercept(
      Coll::iscatterv, comm, "MPI_Iscatterv",
      [&](Arguments& a) {
        a.request(request);
        check_scatterv(a, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                       root);
      },
      [&](lanes::Communicator& lc) {
        track(scatterv(lc, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                       root, comm),
              comm, "MPI_Iscatterv", request);
      },
      [&] {
        return PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                              root, comm, request);
      });
}

int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm) {
  return intercept(
      Coll::gatherv, comm, "MPI_Gatherv",
      [&](Arguments& a) {
        check_gatherv(a, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root);
      },
      [&](lanes::Communicator& lc) {
        complete(gatherv(lc, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                         root, comm));
      },
      [&] {
        return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                            root, comm);
      });
}

int MPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request* request) {
  return intercept(
      Coll::igatherv, comm, "MPI_Igatherv",
      [&](Arguments& a) {
        a.request(request);
        check_gatherv(a, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root);
      },
      [&](lanes::Communicator& lc) {
        track(gatherv(lc, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                      comm),
              comm, "MPI_Igatherv", request);
      },
      [&] {
        return PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                             root, comm, request);
      });
}

int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm) {
  return intercept(
      Coll::allgatherv, comm, "MPI_Allgatherv",
      [&](Arguments& a) {
        check_allgatherv(a, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype);
      },
      [&](lanes::Communicator& lc) {
        complete(allgatherv(lc, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                            comm));
      },
      [&] {
        return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                               comm);
      });
}

int MPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request* request) {
  return intercept(
      Coll::iallgatherv, comm, "MPI_Iallgatherv",
      [&](Arguments& a) {
        a.request(request);
        check_allgatherv(a, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype);
      },
      [&](lanes::Communicator& lc) {
        track(allgatherv(lc, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                         comm),
              comm, "MPI_Iallgatherv", request);
      },
      [&] {
        return PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                                comm, request);
      });
}

int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                  MPI_Datatype recvtype, MPI_Comm comm) {
  return intercept(
      Coll::alltoallv, comm, "MPI_Alltoallv",
      [&](Arguments& a) {
        check_alltoallv(a, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                        recvtype);
      },
      [&](lanes::Communicator& lc) {
        complete(alltoallv(lc, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                           recvtype, comm));
      },
      [&] {
        return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                              recvtype, comm);
      });
}

int MPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request* request) {
  return intercept(
      Coll::ialltoallv, comm, "MPI_Ialltoallv",
      [&](Arguments& a) {
        a.request(request);
        check_alltoallv(a, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                        recvtype);
      },
      [&](lanes::Communicator& lc) {
        track(alltoallv(lc, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                        recvtype, comm),
              comm, "MPI_Ialltoallv", request);
      },
      [&] {
        return PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                               recvtype, comm, request);
      });
}

}  // extern "C"

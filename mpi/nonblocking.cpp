// MPI_Ibcast, MPI_Iscatter, MPI_Igather, MPI_Ialltoall and MPI_Iallgather: lanes' nonblocking
// collectives over contiguous views of the buffers (mpi/staging.hpp), handed to the MPI program
// as requests (mpi/requests.hpp). The buffers they stage or copy live until the request
// completes; staged receive data is unpacked then.
#include <mpi.h>

#include <memory>
#include <span>
#include <vector>

#include "mpi/checks.hpp"
#include "mpi/intercept.hpp"
#include "mpi/requests.hpp"

namespace {

using namespace lanes::mpi_interpose;
using Bytes = std::vector<std::byte>;

// A receive view kept alive until completion, unpacked then.
std::span<std::byte> receive_into(Started& s, const TypedBuffer& b, MPI_Comm comm) {
  auto r = hold<RecvBytes>(s, b, comm);
  s.finish = [r] { r->finish(); };
  return r->bytes();
}

}  // namespace

extern "C" {

int MPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
               MPI_Request* request) {
  return intercept(
      Coll::ibcast, comm, "MPI_Ibcast",
      [&](Arguments& a) {
        a.request(request);
        check_bcast(a, buffer, count, datatype, root);
      },
      [&](lanes::Communicator& lc) {
        Started s;
        const TypedBuffer b{buffer, count, datatype, 1};
        if (lc.rank() == root) {
          const std::span<const std::byte> in = hold<SendBytes>(s, b, comm)->bytes();
          // The root's data is only read.
          s.request =
              lc.ibcast_bytes(std::span(const_cast<std::byte*>(in.data()), in.size()), root);
        } else {
          s.request = lc.ibcast_bytes(receive_into(s, b, comm), root);
        }
        track(std::move(s), comm, "MPI_Ibcast", request);
      },
      [&] { return PMPI_Ibcast(buffer, count, datatype, root, comm, request); });
}

int MPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request* request) {
  return intercept(
      Coll::iscatter, comm, "MPI_Iscatter",
      [&](Arguments& a) {
        a.request(request);
        check_scatter(a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
      },
      [&](lanes::Communicator& lc) {
        Started s;
        std::span<const std::byte> send;
        std::span<std::byte> recv;
        if (lc.rank() == root) {
          send = hold<SendBytes>(s, TypedBuffer{sendbuf, sendcount, sendtype, lc.size()}, comm)
                     ->bytes();
        }
        if (lc.rank() == root && recvbuf == MPI_IN_PLACE) {
          // The root's own block stays where it is: receive it into scratch.
          recv = *hold<Bytes>(s, send.size() / static_cast<std::size_t>(lc.size()));
        } else {
          recv = receive_into(s, {recvbuf, recvcount, recvtype, 1}, comm);
        }
        s.request = lc.iscatter_bytes(send, recv, root);
        track(std::move(s), comm, "MPI_Iscatter", request);
      },
      [&] {
        return PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                             request);
      });
}

int MPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                MPI_Request* request) {
  return intercept(
      Coll::igather, comm, "MPI_Igather",
      [&](Arguments& a) {
        a.request(request);
        check_gather(a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
      },
      [&](lanes::Communicator& lc) {
        Started s;
        std::span<const std::byte> send;
        if (lc.rank() == root && sendbuf == MPI_IN_PLACE) {
          // The root's contribution already sits in its own block of recvbuf.
          send = *hold<Bytes>(s, own_block(recvbuf, recvcount, recvtype, root, comm));
        } else {
          send = hold<SendBytes>(s, TypedBuffer{sendbuf, sendcount, sendtype, 1}, comm)->bytes();
        }
        std::span<std::byte> recv;
        if (lc.rank() == root) {
          recv = receive_into(s, {recvbuf, recvcount, recvtype, lc.size()}, comm);
        }
        s.request = lc.igather_bytes(send, recv, root);
        track(std::move(s), comm, "MPI_Igather", request);
      },
      [&] {
        return PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                            request);
      });
}

int MPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return intercept(
      Coll::ialltoall, comm, "MPI_Ialltoall",
      [&](Arguments& a) {
        a.request(request);
        check_exchange(a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, a.size());
      },
      [&](lanes::Communicator& lc) {
        Started s;
        std::span<const std::byte> send;
        if (sendbuf == MPI_IN_PLACE) {
          // The data to send is in recvbuf, laid out by recvcount and recvtype: a copy of it.
          send = *hold<Bytes>(
              s, copy_of(SendBytes({recvbuf, recvcount, recvtype, lc.size()}, comm).bytes()));
        } else {
          send = hold<SendBytes>(s, TypedBuffer{sendbuf, sendcount, sendtype, lc.size()}, comm)
                     ->bytes();
        }
        const std::span<std::byte> recv =
            receive_into(s, {recvbuf, recvcount, recvtype, lc.size()}, comm);
        s.request = lc.ialltoall_bytes(send, recv);
        track(std::move(s), comm, "MPI_Ialltoall", request);
      },
      [&] {
        return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                              request);
      });
}

int MPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return intercept(
      Coll::iallgather, comm, "MPI_Iallgather",
      [&](Arguments& a) {
        a.request(request);
        check_exchange(a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, 1);
      },
      [&](lanes::Communicator& lc) {
        Started s;
        std::span<const std::byte> send;
        if (sendbuf == MPI_IN_PLACE) {
          // This rank's contribution already sits in its own block of recvbuf.
          send = *hold<Bytes>(s, own_block(recvbuf, recvcount, recvtype, lc.rank(), comm));
        } else {
          send = hold<SendBytes>(s, TypedBuffer{sendbuf, sendcount, sendtype, 1}, comm)->bytes();
        }
        const std::span<std::byte> recv =
            receive_into(s, {recvbuf, recvcount, recvtype, lc.size()}, comm);
        s.request = lc.iallgather_bytes(send, recv);
        track(std::move(s), comm, "MPI_Iallgather", request);
      },
      [&] {
        return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                               request);
      });
}

}  // extern "C"

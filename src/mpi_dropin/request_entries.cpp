// The C entry points of the nonblocking and persistent reductions and of
// the completion calls (requests.hpp says how their requests work). The
// persistent forms are Open MPI 4.1's extension, MPIX_<call>_init
// (mpi-ext.h), and MPI-4's MPI_<call>_init where mpi.h is MPI-4.
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include "src/mpi_dropin/requests.hpp"

namespace dropin = hreduce::detail::mpi_dropin;
using hreduce::detail::CollectiveKind;
using hreduce::detail::mpi_dropin::Args;

extern "C" {

int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm, MPI_Request* request) {
  const Args a{"MPI_Iallreduce",
               CollectiveKind::allreduce,
               sendbuf,
               recvbuf,
               count,
               nullptr,
               datatype,
               op,
               0,
               comm};
  return dropin::start_call(a, false, request, [&](MPI_Request* r) {
    return PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, r);
  });
}

int MPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm, MPI_Request* request) {
  const Args a{"MPI_Iscan", CollectiveKind::scan, sendbuf, recvbuf, count, nullptr, datatype, op, 0,
               comm};
  return dropin::start_call(a, false, request, [&](MPI_Request* r) {
    return PMPI_Iscan(sendbuf, recvbuf, count, datatype, op, comm, r);
  });
}

int MPI_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm, MPI_Request* request) {
  const Args a{
      "MPI_Iexscan", CollectiveKind::exscan, sendbuf, recvbuf, count, nullptr, datatype, op, 0,
      comm};
  return dropin::start_call(a, false, request, [&](MPI_Request* r) {
    return PMPI_Iexscan(sendbuf, recvbuf, count, datatype, op, comm, r);
  });
}

int MPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                              MPI_Request* request) {
  const Args a{"MPI_Ireduce_scatter_block",
               CollectiveKind::reduce_scatter_block,
               sendbuf,
               recvbuf,
               recvcount,
               nullptr,
               datatype,
               op,
               0,
               comm};
  return dropin::start_call(a, false, request, [&](MPI_Request* r) {
    return PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, r);
  });
}

int MPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm, MPI_Request* request) {
  const Args a{
      "MPI_Ireduce", CollectiveKind::reduce, sendbuf, recvbuf, count, nullptr, datatype, op, root,
      comm};
  return dropin::start_call(a, false, request, [&](MPI_Request* r) {
    return PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, r);
  });
}

int MPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  const Args a{"MPI_Ireduce_scatter",
               CollectiveKind::reduce_scatter,
               sendbuf,
               recvbuf,
               0,
               recvcounts,
               datatype,
               op,
               0,
               comm};
  return dropin::start_call(a, false, request, [&](MPI_Request* r) {
    return PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, r);
  });
}

// The persistent forms, under each name this MPI has (PREFIX: MPIX or
// MPI), handing on to PMPI<PREFIX>_<call>_init. The info argument carries
// no hint hreduce reads.
#define HREDUCE_COUNT_INIT(PREFIX, Call, KIND)                                                     \
  int PREFIX##_##Call##_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, \
                             MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request* request) {      \
    const Args a{                                                                                  \
        #PREFIX "_" #Call "_init", KIND, sendbuf, recvbuf, count, nullptr, datatype, op, 0, comm}; \
    return dropin::start_call(a, true, request, [&](MPI_Request* r) {                              \
      return P##PREFIX##_##Call##_init(sendbuf, recvbuf, count, datatype, op, comm, info, r);      \
    });                                                                                            \
  }

#define HREDUCE_INIT_FORMS(PREFIX)                                                                 \
  HREDUCE_COUNT_INIT(PREFIX, Allreduce, CollectiveKind::allreduce)                                 \
  HREDUCE_COUNT_INIT(PREFIX, Scan, CollectiveKind::scan)                                           \
  HREDUCE_COUNT_INIT(PREFIX, Exscan, CollectiveKind::exscan)                                       \
  HREDUCE_COUNT_INIT(PREFIX, Reduce_scatter_block, CollectiveKind::reduce_scatter_block)           \
  int PREFIX##_Reduce_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,   \
                           MPI_Op op, int root, MPI_Comm comm, MPI_Info info,                      \
                           MPI_Request* request) {                                                 \
    const Args a{#PREFIX "_Reduce_init",                                                           \
                 CollectiveKind::reduce,                                                           \
                 sendbuf,                                                                          \
                 recvbuf,                                                                          \
                 count,                                                                            \
                 nullptr,                                                                          \
                 datatype,                                                                         \
                 op,                                                                               \
                 root,                                                                             \
                 comm};                                                                            \
    return dropin::start_call(a, true, request, [&](MPI_Request* r) {                              \
      return P##PREFIX##_Reduce_init(sendbuf, recvbuf, count, datatype, op, root, comm, info, r);  \
    });                                                                                            \
  }                                                                                                \
  int PREFIX##_Reduce_scatter_init(const void* sendbuf, void* recvbuf, const int recvcounts[],     \
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, \
                                   MPI_Request* request) {                                         \
    const Args a{#PREFIX "_Reduce_scatter_init",                                                   \
                 CollectiveKind::reduce_scatter,                                                   \
                 sendbuf,                                                                          \
                 recvbuf,                                                                          \
                 0,                                                                                \
                 recvcounts,                                                                       \
                 datatype,                                                                         \
                 op,                                                                               \
                 0,                                                                                \
                 comm};                                                                            \
    return dropin::start_call(a, true, request, [&](MPI_Request* r) {                              \
      return P##PREFIX##_Reduce_scatter_init(sendbuf, recvbuf, recvcounts, datatype, op, comm,     \
                                             info, r);                                             \
    });                                                                                            \
  }

#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ)
HREDUCE_INIT_FORMS(MPIX)
#endif
#if MPI_VERSION >= 4
HREDUCE_INIT_FORMS(MPI)
#endif

int MPI_Wait(MPI_Request* request, MPI_Status* status) { return dropin::wait(request, status); }

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  return dropin::test(request, flag, status);
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  return dropin::waitall(count, requests, statuses);
}

int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  return dropin::testall(count, requests, flag, statuses);
}

int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  return dropin::waitany(count, requests, index, status);
}

int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  return dropin::testany(count, requests, index, flag, status);
}

int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                 MPI_Status statuses[]) {
  return dropin::waitsome(incount, requests, outcount, indices, statuses);
}

int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                 MPI_Status statuses[]) {
  return dropin::testsome(incount, requests, outcount, indices, statuses);
}

int MPI_Request_free(MPI_Request* request) { return dropin::request_free(request); }

int MPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  return dropin::request_get_status(request, flag, status);
}

int MPI_Start(MPI_Request* request) { return dropin::start(request); }

int MPI_Startall(int count, MPI_Request requests[]) { return dropin::startall(count, requests); }

int MPI_Cancel(MPI_Request* request) { return dropin::cancel(request); }

}  // extern "C"

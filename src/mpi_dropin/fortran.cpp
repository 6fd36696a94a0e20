// The Fortran entry points. Open MPI's Fortran bindings call PMPI_* in C
// directly, so the C definitions in intercept.cpp never see a Fortran
// program's calls: these take the place of the bindings themselves, for
// mpif.h and `use mpi` (every name mangling Open MPI exports: mpi_allreduce_,
// mpi_allreduce, mpi_allreduce__, MPI_ALLREDUCE) and for `use mpi_f08`
// (mpi_allreduce_f08_, whose ierror may be absent). Handles are converted
// with PMPI_*_f2c; Fortran's MPI_IN_PLACE and MPI_BOTTOM are addresses of
// Open MPI's common blocks, recognised here as Open MPI's bindings do.
#include <mpi.h>
// Open MPI's extensions (MPIX_*_init), which need mpi.h first.
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include "src/mpi_dropin/awaiting_team.hpp"
#include "src/mpi_dropin/fortran_sentinels.hpp"
#include "src/mpi_dropin/requests.hpp"
#include "src/mpi_dropin/serve.hpp"
#include "src/mpi_dropin/teams.hpp"

static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran INTEGER arrays are passed as int arrays");

namespace hreduce::detail::mpi_dropin {
namespace {

using fortran::set;

// A Fortran buffer argument as C sees it.
const void* c_send(const void* buffer) {
  if (fortran::is_in_place(buffer)) return MPI_IN_PLACE;
  if (fortran::is_bottom(buffer)) return MPI_BOTTOM;
  return buffer;
}
void* c_recv(void* buffer) { return const_cast<void*>(c_send(buffer)); }

// The C entry's shared path, with the Fortran handles and buffers made C's.
void count_call(const char* name, CollectiveKind kind, CountCall pmpi, const void* s, void* r,
                const MPI_Fint* count, const MPI_Fint* type, const MPI_Fint* op,
                const MPI_Fint* comm, MPI_Fint* ierror) {
  set(ierror, mpi_dropin::count_call(name, kind, pmpi, c_send(s), c_recv(r), *count,
                                     PMPI_Type_f2c(*type), PMPI_Op_f2c(*op), PMPI_Comm_f2c(*comm)));
}

void allreduce(const void* s, void* r, const MPI_Fint* count, const MPI_Fint* type,
               const MPI_Fint* op, const MPI_Fint* comm, MPI_Fint* ierror) {
  count_call("MPI_ALLREDUCE", CollectiveKind::allreduce, &PMPI_Allreduce, s, r, count, type, op,
             comm, ierror);
}

void scan(const void* s, void* r, const MPI_Fint* count, const MPI_Fint* type, const MPI_Fint* op,
          const MPI_Fint* comm, MPI_Fint* ierror) {
  count_call("MPI_SCAN", CollectiveKind::scan, &PMPI_Scan, s, r, count, type, op, comm, ierror);
}

void exscan(const void* s, void* r, const MPI_Fint* count, const MPI_Fint* type, const MPI_Fint* op,
            const MPI_Fint* comm, MPI_Fint* ierror) {
  count_call("MPI_EXSCAN", CollectiveKind::exscan, &PMPI_Exscan, s, r, count, type, op, comm,
             ierror);
}

void reduce_scatter_block(const void* s, void* r, const MPI_Fint* count, const MPI_Fint* type,
                          const MPI_Fint* op, const MPI_Fint* comm, MPI_Fint* ierror) {
  count_call("MPI_REDUCE_SCATTER_BLOCK", CollectiveKind::reduce_scatter_block,
             &PMPI_Reduce_scatter_block, s, r, count, type, op, comm, ierror);
}

void reduce(const void* s, void* r, const MPI_Fint* count, const MPI_Fint* type, const MPI_Fint* op,
            const MPI_Fint* root, const MPI_Fint* comm, MPI_Fint* ierror) {
  const Args a{
      "MPI_REDUCE", CollectiveKind::reduce, c_send(s),        c_recv(r), *count,
      nullptr,      PMPI_Type_f2c(*type),   PMPI_Op_f2c(*op), *root,     PMPI_Comm_f2c(*comm)};
  set(ierror,
      serve(a, [&] { return PMPI_Reduce(a.send, a.recv, a.count, a.type, a.op, a.root, a.comm); }));
}

void reduce_scatter(const void* s, void* r, const MPI_Fint* counts, const MPI_Fint* type,
                    const MPI_Fint* op, const MPI_Fint* comm, MPI_Fint* ierror) {
  const Args a{"MPI_REDUCE_SCATTER",
               CollectiveKind::reduce_scatter,
               c_send(s),
               c_recv(r),
               0,
               reinterpret_cast<const int*>(counts),
               PMPI_Type_f2c(*type),
               PMPI_Op_f2c(*op),
               0,
               PMPI_Comm_f2c(*comm)};
  set(ierror, serve(a, [&] {
        return PMPI_Reduce_scatter(a.send, a.recv, a.recvcounts, a.type, a.op, a.comm);
      }));
}

// The nonblocking and persistent reductions, served or handed on as the C
// ones are (requests.hpp), their request converted to Fortran's handle.
template <class Start>
void start_call(const Args& a, bool persistent, MPI_Fint* request, MPI_Fint* ierror, Start&& pmpi) {
  MPI_Request r = MPI_REQUEST_NULL;
  const int rc = mpi_dropin::start_call(a, persistent, &r, pmpi);
  if (rc == MPI_SUCCESS) *request = PMPI_Request_c2f(r);
  set(ierror, rc);
}

// The nonblocking (`persistent` false) and persistent forms of the calls
// shaped (send, recv, count, type, op, comm), with their Fortran handles.
void count_start(const char* name, CollectiveKind kind, bool persistent, const void* s, void* r,
                 const MPI_Fint* count, const MPI_Fint* type, const MPI_Fint* op,
                 const MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierror,
                 int (*pmpi)(const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm,
                             MPI_Request*)) {
  const Args a{name,
               kind,
               c_send(s),
               c_recv(r),
               *count,
               nullptr,
               PMPI_Type_f2c(*type),
               PMPI_Op_f2c(*op),
               0,
               PMPI_Comm_f2c(*comm)};
  start_call(a, persistent, request, ierror, [&](MPI_Request* q) {
    return pmpi(a.send, a.recv, a.count, a.type, a.op, a.comm, q);
  });
}

// PMPIX_<call>_init with the shape of PMPI_I<call> (the info argument,
// which hreduce does not read, bound to MPI_INFO_NULL).
template <auto Init>
int init_without_info(const void* s, void* r, int count, MPI_Datatype type, MPI_Op op,
                      MPI_Comm comm, MPI_Request* q) {
  return Init(s, r, count, type, op, comm, MPI_INFO_NULL, q);
}

#define HREDUCE_COUNT_STARTS(call, NAME, KIND, Pmpi, PmpixInit)                                  \
  void i##call(const void* s, void* r, const MPI_Fint* count, const MPI_Fint* type,              \
               const MPI_Fint* op, const MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierror) {  \
    count_start("MPI_I" NAME, KIND, false, s, r, count, type, op, comm, request, ierror, &Pmpi); \
  }                                                                                              \
  void call##_init(const void* s, void* r, const MPI_Fint* count, const MPI_Fint* type,          \
                   const MPI_Fint* op, const MPI_Fint* comm, const MPI_Fint*, MPI_Fint* request, \
                   MPI_Fint* ierror) {                                                           \
    count_start("MPIX_" NAME "_INIT", KIND, true, s, r, count, type, op, comm, request, ierror,  \
                &init_without_info<&PmpixInit>);                                                 \
  }

HREDUCE_COUNT_STARTS(allreduce, "ALLREDUCE", CollectiveKind::allreduce, PMPI_Iallreduce,
                     PMPIX_Allreduce_init)
HREDUCE_COUNT_STARTS(scan, "SCAN", CollectiveKind::scan, PMPI_Iscan, PMPIX_Scan_init)
HREDUCE_COUNT_STARTS(exscan, "EXSCAN", CollectiveKind::exscan, PMPI_Iexscan, PMPIX_Exscan_init)
HREDUCE_COUNT_STARTS(reduce_scatter_block, "REDUCE_SCATTER_BLOCK",
                     CollectiveKind::reduce_scatter_block, PMPI_Ireduce_scatter_block,
                     PMPIX_Reduce_scatter_block_init)

void reduce_start(const char* name, bool persistent, const void* s, void* r, const MPI_Fint* count,
                  const MPI_Fint* type, const MPI_Fint* op, const MPI_Fint* root,
                  const MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierror) {
  const Args a{name,    CollectiveKind::reduce, c_send(s),        c_recv(r), *count,
               nullptr, PMPI_Type_f2c(*type),   PMPI_Op_f2c(*op), *root,     PMPI_Comm_f2c(*comm)};
  start_call(a, persistent, request, ierror, [&](MPI_Request* q) {
    return persistent ? PMPIX_Reduce_init(a.send, a.recv, a.count, a.type, a.op, a.root, a.comm,
                                          MPI_INFO_NULL, q)
                      : PMPI_Ireduce(a.send, a.recv, a.count, a.type, a.op, a.root, a.comm, q);
  });
}

void ireduce(const void* s, void* r, const MPI_Fint* count, const MPI_Fint* type,
             const MPI_Fint* op, const MPI_Fint* root, const MPI_Fint* comm, MPI_Fint* request,
             MPI_Fint* ierror) {
  reduce_start("MPI_IREDUCE", false, s, r, count, type, op, root, comm, request, ierror);
}

void reduce_init(const void* s, void* r, const MPI_Fint* count, const MPI_Fint* type,
                 const MPI_Fint* op, const MPI_Fint* root, const MPI_Fint* comm, const MPI_Fint*,
                 MPI_Fint* request, MPI_Fint* ierror) {
  reduce_start("MPIX_REDUCE_INIT", true, s, r, count, type, op, root, comm, request, ierror);
}

void reduce_scatter_start(const char* name, bool persistent, const void* s, void* r,
                          const MPI_Fint* counts, const MPI_Fint* type, const MPI_Fint* op,
                          const MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierror) {
  const Args a{name,
               CollectiveKind::reduce_scatter,
               c_send(s),
               c_recv(r),
               0,
               reinterpret_cast<const int*>(counts),
               PMPI_Type_f2c(*type),
               PMPI_Op_f2c(*op),
               0,
               PMPI_Comm_f2c(*comm)};
  start_call(a, persistent, request, ierror, [&](MPI_Request* q) {
    return persistent ? PMPIX_Reduce_scatter_init(a.send, a.recv, a.recvcounts, a.type, a.op,
                                                  a.comm, MPI_INFO_NULL, q)
                      : PMPI_Ireduce_scatter(a.send, a.recv, a.recvcounts, a.type, a.op, a.comm, q);
  });
}

void ireduce_scatter(const void* s, void* r, const MPI_Fint* counts, const MPI_Fint* type,
                     const MPI_Fint* op, const MPI_Fint* comm, MPI_Fint* request,
                     MPI_Fint* ierror) {
  reduce_scatter_start("MPI_IREDUCE_SCATTER", false, s, r, counts, type, op, comm, request, ierror);
}

void reduce_scatter_init(const void* s, void* r, const MPI_Fint* counts, const MPI_Fint* type,
                         const MPI_Fint* op, const MPI_Fint* comm, const MPI_Fint*,
                         MPI_Fint* request, MPI_Fint* ierror) {
  reduce_scatter_start("MPIX_REDUCE_SCATTER_INIT", true, s, r, counts, type, op, comm, request,
                       ierror);
}

// MPI_Barrier from Fortran, as from C: where the communicator's reductions
// waited for a team, it is built first (teams.hpp).
void barrier(const MPI_Fint* comm, MPI_Fint* ierror) {
  const MPI_Comm c = PMPI_Comm_f2c(*comm);
  if (settings().enabled && c != MPI_COMM_NULL) build_at_barrier(c);
  set(ierror, PMPI_Barrier(c));
}

// MPI_Finalize from Fortran: the verbose summary first, as from C, even
// where no reduction was made.
void finalize(MPI_Fint* ierror) {
  prepare_summary();
  release_spare_requests();
  release_awaiting();
  set(ierror, PMPI_Finalize());
}

}  // namespace
}  // namespace hreduce::detail::mpi_dropin

namespace dropin = hreduce::detail::mpi_dropin;

// Each Fortran name of a call: the four mpif.h / `use mpi` manglings and
// the mpi_f08 one, all forwarding to dropin::<call>.
#define HREDUCE_FORTRAN(call, upper, params, args)  \
  void mpi_##call##_ params { dropin::call args; }  \
  void mpi_##call params { dropin::call args; }     \
  void mpi_##call##__ params { dropin::call args; } \
  void upper params { dropin::call args; }          \
  void mpi_##call##_f08_ params { dropin::call args; }

#define SIX_ARGS                                                                            \
  (const void* s, void* r, const MPI_Fint* count, const MPI_Fint* type, const MPI_Fint* op, \
   const MPI_Fint* comm, MPI_Fint* ierror)

extern "C" {
HREDUCE_FORTRAN(allreduce, MPI_ALLREDUCE, SIX_ARGS, (s, r, count, type, op, comm, ierror))
HREDUCE_FORTRAN(scan, MPI_SCAN, SIX_ARGS, (s, r, count, type, op, comm, ierror))
HREDUCE_FORTRAN(exscan, MPI_EXSCAN, SIX_ARGS, (s, r, count, type, op, comm, ierror))
HREDUCE_FORTRAN(reduce_scatter_block, MPI_REDUCE_SCATTER_BLOCK, SIX_ARGS,
                (s, r, count, type, op, comm, ierror))
HREDUCE_FORTRAN(reduce_scatter, MPI_REDUCE_SCATTER,
                (const void* s, void* r, const MPI_Fint* counts, const MPI_Fint* type,
                 const MPI_Fint* op, const MPI_Fint* comm, MPI_Fint* ierror),
                (s, r, counts, type, op, comm, ierror))
HREDUCE_FORTRAN(reduce, MPI_REDUCE,
                (const void* s, void* r, const MPI_Fint* count, const MPI_Fint* type,
                 const MPI_Fint* op, const MPI_Fint* root, const MPI_Fint* comm, MPI_Fint* ierror),
                (s, r, count, type, op, root, comm, ierror))

#define SIX_ARGS_AND_REQUEST                                                                \
  (const void* s, void* r, const MPI_Fint* count, const MPI_Fint* type, const MPI_Fint* op, \
   const MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierror)

HREDUCE_FORTRAN(iallreduce, MPI_IALLREDUCE, SIX_ARGS_AND_REQUEST,
                (s, r, count, type, op, comm, request, ierror))
HREDUCE_FORTRAN(iscan, MPI_ISCAN, SIX_ARGS_AND_REQUEST,
                (s, r, count, type, op, comm, request, ierror))
HREDUCE_FORTRAN(iexscan, MPI_IEXSCAN, SIX_ARGS_AND_REQUEST,
                (s, r, count, type, op, comm, request, ierror))
HREDUCE_FORTRAN(ireduce_scatter_block, MPI_IREDUCE_SCATTER_BLOCK, SIX_ARGS_AND_REQUEST,
                (s, r, count, type, op, comm, request, ierror))
HREDUCE_FORTRAN(ireduce_scatter, MPI_IREDUCE_SCATTER,
                (const void* s, void* r, const MPI_Fint* counts, const MPI_Fint* type,
                 const MPI_Fint* op, const MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierror),
                (s, r, counts, type, op, comm, request, ierror))
HREDUCE_FORTRAN(ireduce, MPI_IREDUCE,
                (const void* s, void* r, const MPI_Fint* count, const MPI_Fint* type,
                 const MPI_Fint* op, const MPI_Fint* root, const MPI_Fint* comm, MPI_Fint* request,
                 MPI_Fint* ierror),
                (s, r, count, type, op, root, comm, request, ierror))

// The persistent forms: Open MPI's mpix_<call>_init (mpif-ext.h and the
// mpi_f08_ext module), with their info argument.
#define HREDUCE_FORTRAN_X(call, upper, params, args) \
  void mpix_##call##_ params { dropin::call args; }  \
  void mpix_##call params { dropin::call args; }     \
  void mpix_##call##__ params { dropin::call args; } \
  void upper params { dropin::call args; }           \
  void mpix_##call##_f08_ params { dropin::call args; }

#define SIX_ARGS_INFO_AND_REQUEST                                                           \
  (const void* s, void* r, const MPI_Fint* count, const MPI_Fint* type, const MPI_Fint* op, \
   const MPI_Fint* comm, const MPI_Fint* info, MPI_Fint* request, MPI_Fint* ierror)

HREDUCE_FORTRAN_X(allreduce_init, MPIX_ALLREDUCE_INIT, SIX_ARGS_INFO_AND_REQUEST,
                  (s, r, count, type, op, comm, info, request, ierror))
HREDUCE_FORTRAN_X(scan_init, MPIX_SCAN_INIT, SIX_ARGS_INFO_AND_REQUEST,
                  (s, r, count, type, op, comm, info, request, ierror))
HREDUCE_FORTRAN_X(exscan_init, MPIX_EXSCAN_INIT, SIX_ARGS_INFO_AND_REQUEST,
                  (s, r, count, type, op, comm, info, request, ierror))
HREDUCE_FORTRAN_X(reduce_scatter_block_init, MPIX_REDUCE_SCATTER_BLOCK_INIT,
                  SIX_ARGS_INFO_AND_REQUEST, (s, r, count, type, op, comm, info, request, ierror))
HREDUCE_FORTRAN_X(reduce_scatter_init, MPIX_REDUCE_SCATTER_INIT,
                  (const void* s, void* r, const MPI_Fint* counts, const MPI_Fint* type,
                   const MPI_Fint* op, const MPI_Fint* comm, const MPI_Fint* info,
                   MPI_Fint* request, MPI_Fint* ierror),
                  (s, r, counts, type, op, comm, info, request, ierror))
HREDUCE_FORTRAN_X(reduce_init, MPIX_REDUCE_INIT,
                  (const void* s, void* r, const MPI_Fint* count, const MPI_Fint* type,
                   const MPI_Fint* op, const MPI_Fint* root, const MPI_Fint* comm,
                   const MPI_Fint* info, MPI_Fint* request, MPI_Fint* ierror),
                  (s, r, count, type, op, root, comm, info, request, ierror))
HREDUCE_FORTRAN(finalize, MPI_FINALIZE, (MPI_Fint * ierror), (ierror))
HREDUCE_FORTRAN(barrier, MPI_BARRIER, (const MPI_Fint* comm, MPI_Fint* ierror), (comm, ierror))
}

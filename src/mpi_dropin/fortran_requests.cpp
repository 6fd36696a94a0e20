// The Fortran completion calls (MPI_WAIT, MPI_TESTALL, MPI_START, ...).
// Open MPI's bindings call PMPI_* in C, so a served request would never
// complete through them: these take their place, convert the handles and
// statuses, and run the C library's own (requests.hpp). For mpif.h and
// `use mpi` they are the four manglings; for `use mpi_f08`, whose wrappers
// call Open MPI's C binding ompi_<call>_f or (the Test family) its
// profiling name pmpi_<call>_ with the same arguments, those two.
// Indices are 1-based in Fortran; LOGICAL true is 1 (gfortran).
#include <mpi.h>

#include <vector>

#include "src/mpi_dropin/fortran_sentinels.hpp"
#include "src/mpi_dropin/requests.hpp"

namespace hreduce::detail::mpi_dropin::fortran {
namespace {

constexpr int kStatusSize = sizeof(MPI_Status) / sizeof(int);  // Fortran's MPI_STATUS_SIZE

// One status: C's, written back to Fortran's unless ignored.
struct Status {
  explicit Status(MPI_Fint* f) : fortran(f) {}
  MPI_Status* c() { return ignores_status(fortran) ? MPI_STATUS_IGNORE : &status; }
  void back() {
    if (!ignores_status(fortran)) PMPI_Status_c2f(&status, fortran);
  }
  MPI_Fint* fortran;
  MPI_Status status{};
};

// An array of requests and of statuses, C's beside Fortran's.
struct Requests {
  Requests(int n, MPI_Fint* f, MPI_Fint* s) : count(n), fortran(f), fortran_statuses(s) {
    c.resize(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) c[static_cast<std::size_t>(i)] = PMPI_Request_f2c(f[i]);
    statuses.resize(static_cast<std::size_t>(n));
  }
  MPI_Status* c_statuses() {
    return ignores_statuses(fortran_statuses) ? MPI_STATUSES_IGNORE : statuses.data();
  }
  // `done` statuses (the first ones) and every request, back to Fortran.
  void back(int done) {
    for (int i = 0; i < count; ++i) fortran[i] = PMPI_Request_c2f(c[static_cast<std::size_t>(i)]);
    if (ignores_statuses(fortran_statuses)) return;
    for (int i = 0; i < done; ++i) {
      PMPI_Status_c2f(&statuses[static_cast<std::size_t>(i)], fortran_statuses + i * kStatusSize);
    }
  }
  int count;
  MPI_Fint* fortran;
  MPI_Fint* fortran_statuses;
  std::vector<MPI_Request> c;
  std::vector<MPI_Status> statuses;
};

MPI_Fint logical(int flag) { return flag != 0 ? 1 : 0; }

void wait(MPI_Fint* request, MPI_Fint* status, MPI_Fint* ierror) {
  MPI_Request r = PMPI_Request_f2c(*request);
  Status s(status);
  const int rc = mpi_dropin::wait(&r, s.c());
  *request = PMPI_Request_c2f(r);
  s.back();
  set(ierror, rc);
}

void test(MPI_Fint* request, MPI_Fint* flag, MPI_Fint* status, MPI_Fint* ierror) {
  MPI_Request r = PMPI_Request_f2c(*request);
  Status s(status);
  int f = 0;
  const int rc = mpi_dropin::test(&r, &f, s.c());
  *request = PMPI_Request_c2f(r);
  *flag = logical(f);
  if (f != 0) s.back();
  set(ierror, rc);
}

void waitall(const MPI_Fint* count, MPI_Fint* requests, MPI_Fint* statuses, MPI_Fint* ierror) {
  Requests q(*count, requests, statuses);
  const int rc = mpi_dropin::waitall(*count, q.c.data(), q.c_statuses());
  q.back(*count);
  set(ierror, rc);
}

void testall(const MPI_Fint* count, MPI_Fint* requests, MPI_Fint* flag, MPI_Fint* statuses,
             MPI_Fint* ierror) {
  Requests q(*count, requests, statuses);
  int f = 0;
  const int rc = mpi_dropin::testall(*count, q.c.data(), &f, q.c_statuses());
  q.back(f != 0 ? *count : 0);
  *flag = logical(f);
  set(ierror, rc);
}

void waitany(const MPI_Fint* count, MPI_Fint* requests, MPI_Fint* index, MPI_Fint* status,
             MPI_Fint* ierror) {
  Requests q(*count, requests, nullptr);
  Status s(status);
  int i = MPI_UNDEFINED;
  const int rc = mpi_dropin::waitany(*count, q.c.data(), &i, s.c());
  q.back(0);
  *index = i == MPI_UNDEFINED ? MPI_UNDEFINED : i + 1;
  s.back();
  set(ierror, rc);
}

void testany(const MPI_Fint* count, MPI_Fint* requests, MPI_Fint* index, MPI_Fint* flag,
             MPI_Fint* status, MPI_Fint* ierror) {
  Requests q(*count, requests, nullptr);
  Status s(status);
  int i = MPI_UNDEFINED;
  int f = 0;
  const int rc = mpi_dropin::testany(*count, q.c.data(), &i, &f, s.c());
  q.back(0);
  *index = i == MPI_UNDEFINED ? MPI_UNDEFINED : i + 1;
  *flag = logical(f);
  if (f != 0) s.back();
  set(ierror, rc);
}

template <int (*Some)(int, MPI_Request[], int*, int[], MPI_Status[])>
void some(const MPI_Fint* count, MPI_Fint* requests, MPI_Fint* outcount, MPI_Fint* indices,
          MPI_Fint* statuses, MPI_Fint* ierror) {
  Requests q(*count, requests, statuses);
  std::vector<int> c_indices(static_cast<std::size_t>(*count) + 1);
  int out = 0;
  const int rc = Some(*count, q.c.data(), &out, c_indices.data(), q.c_statuses());
  const int done = out == MPI_UNDEFINED ? 0 : out;
  q.back(done);
  for (int k = 0; k < done; ++k) indices[k] = c_indices[static_cast<std::size_t>(k)] + 1;
  *outcount = out;
  set(ierror, rc);
}

void waitsome(const MPI_Fint* count, MPI_Fint* requests, MPI_Fint* outcount, MPI_Fint* indices,
              MPI_Fint* statuses, MPI_Fint* ierror) {
  some<&mpi_dropin::waitsome>(count, requests, outcount, indices, statuses, ierror);
}

void testsome(const MPI_Fint* count, MPI_Fint* requests, MPI_Fint* outcount, MPI_Fint* indices,
              MPI_Fint* statuses, MPI_Fint* ierror) {
  some<&mpi_dropin::testsome>(count, requests, outcount, indices, statuses, ierror);
}

void request_free(MPI_Fint* request, MPI_Fint* ierror) {
  MPI_Request r = PMPI_Request_f2c(*request);
  const int rc = mpi_dropin::request_free(&r);
  *request = PMPI_Request_c2f(r);
  set(ierror, rc);
}

void request_get_status(const MPI_Fint* request, MPI_Fint* flag, MPI_Fint* status,
                        MPI_Fint* ierror) {
  Status s(status);
  int f = 0;
  const int rc = mpi_dropin::request_get_status(PMPI_Request_f2c(*request), &f, s.c());
  *flag = logical(f);
  if (f != 0) s.back();
  set(ierror, rc);
}

void start(MPI_Fint* request, MPI_Fint* ierror) {
  MPI_Request r = PMPI_Request_f2c(*request);
  set(ierror, mpi_dropin::start(&r));
}

void startall(const MPI_Fint* count, MPI_Fint* requests, MPI_Fint* ierror) {
  Requests q(*count, requests, nullptr);
  const int rc = mpi_dropin::startall(*count, q.c.data());
  q.back(0);
  set(ierror, rc);
}

void cancel(MPI_Fint* request, MPI_Fint* ierror) {
  MPI_Request r = PMPI_Request_f2c(*request);
  set(ierror, mpi_dropin::cancel(&r));
}

}  // namespace
}  // namespace hreduce::detail::mpi_dropin::fortran

namespace fortran = hreduce::detail::mpi_dropin::fortran;

// Each Fortran name of a call: the four mpif.h / `use mpi` manglings and
// the two that `use mpi_f08` calls.
#define HREDUCE_FORTRAN_COMPLETION(call, upper, params, args) \
  void mpi_##call##_ params { fortran::call args; }           \
  void mpi_##call params { fortran::call args; }              \
  void mpi_##call##__ params { fortran::call args; }          \
  void upper params { fortran::call args; }                   \
  void ompi_##call##_f params { fortran::call args; }         \
  void pmpi_##call##_ params { fortran::call args; }

extern "C" {
HREDUCE_FORTRAN_COMPLETION(wait, MPI_WAIT, (MPI_Fint * r, MPI_Fint* s, MPI_Fint* e), (r, s, e))
HREDUCE_FORTRAN_COMPLETION(test, MPI_TEST, (MPI_Fint * r, MPI_Fint* f, MPI_Fint* s, MPI_Fint* e),
                           (r, f, s, e))
HREDUCE_FORTRAN_COMPLETION(waitall, MPI_WAITALL,
                           (const MPI_Fint* n, MPI_Fint* r, MPI_Fint* s, MPI_Fint* e), (n, r, s, e))
HREDUCE_FORTRAN_COMPLETION(testall, MPI_TESTALL,
                           (const MPI_Fint* n, MPI_Fint* r, MPI_Fint* f, MPI_Fint* s, MPI_Fint* e),
                           (n, r, f, s, e))
HREDUCE_FORTRAN_COMPLETION(waitany, MPI_WAITANY,
                           (const MPI_Fint* n, MPI_Fint* r, MPI_Fint* i, MPI_Fint* s, MPI_Fint* e),
                           (n, r, i, s, e))
HREDUCE_FORTRAN_COMPLETION(testany, MPI_TESTANY,
                           (const MPI_Fint* n, MPI_Fint* r, MPI_Fint* i, MPI_Fint* f, MPI_Fint* s,
                            MPI_Fint* e),
                           (n, r, i, f, s, e))
HREDUCE_FORTRAN_COMPLETION(waitsome, MPI_WAITSOME,
                           (const MPI_Fint* n, MPI_Fint* r, MPI_Fint* o, MPI_Fint* i, MPI_Fint* s,
                            MPI_Fint* e),
                           (n, r, o, i, s, e))
HREDUCE_FORTRAN_COMPLETION(testsome, MPI_TESTSOME,
                           (const MPI_Fint* n, MPI_Fint* r, MPI_Fint* o, MPI_Fint* i, MPI_Fint* s,
                            MPI_Fint* e),
                           (n, r, o, i, s, e))
HREDUCE_FORTRAN_COMPLETION(request_free, MPI_REQUEST_FREE, (MPI_Fint * r, MPI_Fint* e), (r, e))
HREDUCE_FORTRAN_COMPLETION(request_get_status, MPI_REQUEST_GET_STATUS,
                           (const MPI_Fint* r, MPI_Fint* f, MPI_Fint* s, MPI_Fint* e), (r, f, s, e))
HREDUCE_FORTRAN_COMPLETION(start, MPI_START, (MPI_Fint * r, MPI_Fint* e), (r, e))
HREDUCE_FORTRAN_COMPLETION(startall, MPI_STARTALL, (const MPI_Fint* n, MPI_Fint* r, MPI_Fint* e),
                           (n, r, e))
HREDUCE_FORTRAN_COMPLETION(cancel, MPI_CANCEL, (MPI_Fint * r, MPI_Fint* e), (r, e))
}

/* MPI_THREAD_MULTIPLE through the drop-in library: two threads of every
 * process, each with its own communicator, run allreduces at the same time
 * (two hreduce teams serving concurrently), every other one nonblocking
 * (MPI_Iallreduce, completed by MPI_Wait or a MPI_Test loop). Results are
 * checked against the exact sums. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { kCalls = 2000, kCount = 37 };

typedef struct {
  MPI_Comm comm;
  int salt, failures;
} Work;

static void* worker(void* arg) {
  Work* w = arg;
  int rank, size;
  MPI_Comm_rank(w->comm, &rank);
  MPI_Comm_size(w->comm, &size);
  long in[kCount], out[kCount];
  for (int call = 0; call < kCalls; ++call) {
    const int count = 1 + (call * 7 + w->salt) % kCount;
    for (int i = 0; i < count; ++i) in[i] = rank * 1000 + i + call + w->salt;
    int rc = MPI_SUCCESS;
    if (call % 2 == 0) {
      rc = MPI_Allreduce(in, out, count, MPI_LONG, MPI_SUM, w->comm);
    } else {
      MPI_Request request;
      rc = MPI_Iallreduce(in, out, count, MPI_LONG, MPI_SUM, w->comm, &request);
      if (rc == MPI_SUCCESS && call % 4 == 1) rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
      for (int done = 0; rc == MPI_SUCCESS && call % 4 == 3 && !done;) {
        rc = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      }
    }
    if (rc != MPI_SUCCESS) ++w->failures;
    for (int i = 0; i < count; ++i) {
      const long expect = 1000L * size * (size - 1) / 2 + (long)size * (i + call + w->salt);
      if (out[i] != expect) {
        ++w->failures;
        break;
      }
    }
  }
  return NULL;
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (provided < MPI_THREAD_MULTIPLE) {
    if (rank == 0) printf("dropin_threads_test: MPI_THREAD_MULTIPLE not provided, skipped\n");
    MPI_Finalize();
    return 0;
  }
  Work work[2] = {{MPI_COMM_NULL, 3, 0}, {MPI_COMM_NULL, 11, 0}};
  for (int k = 0; k < 2; ++k) MPI_Comm_dup(MPI_COMM_WORLD, &work[k].comm);
  pthread_t threads[2];
  for (int k = 0; k < 2; ++k) pthread_create(&threads[k], NULL, worker, &work[k]);
  for (int k = 0; k < 2; ++k) pthread_join(threads[k], NULL);
  int failures = work[0].failures + work[1].failures, all = 0;
  for (int k = 0; k < 2; ++k) MPI_Comm_free(&work[k].comm);
  PMPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("dropin_threads_test: %d calls on 2 threads, %d failures\n", 2 * kCalls, all);
  MPI_Finalize();
  return all == 0 ? 0 : 1;
}

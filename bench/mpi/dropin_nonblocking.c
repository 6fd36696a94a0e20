/* Nonblocking and persistent allreduce through MPI alone, as the OSU
 * nonblocking benchmarks measure them: run it without the drop-in (Open
 * MPI's own MPI_Iallreduce) and with //:libhreduce_mpi.so preloaded
 * (dropin_nonblocking.sh does both, in turns). For each size, doubles
 * summed:
 *   blocking     MPI_Allreduce
 *   iallreduce   MPI_Iallreduce then MPI_Wait at once ("pure" time t)
 *   persistent   MPIX_Allreduce_init once, then MPI_Start + MPI_Wait
 *   overlap      MPI_Iallreduce, compute for t, MPI_Wait, as
 *                100 (1 - (overall - compute) / t), the compute timed alone
 *                (a sleep of t lasts longer than t): busy (spinning) and
 *                idle (sleeping: the compute leaves the core free, as a
 *                rank waiting on I/O or on other messages does)
 * Times are microseconds per call, averaged over each process's calls and
 * taken as the slowest process's. The three latencies are timed in turns,
 * `--rounds` times, and each is its median: the machine's drift over the
 * run then falls on all three alike, so their ratios hold where the
 * figures themselves move.
 *   dropin_nonblocking [--sizes 8,1024,65536,1048576] [--min-time-ms 200] [--rounds 5] */
#include <mpi.h>
// Open MPI's extensions (MPIX_*_init), which need mpi.h first.
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) { return MPI_Wtime(); }

static void spin_for(double seconds) {
  const double until = now() + seconds;
  while (now() < until) {
  }
}

static void sleep_for(double seconds) {
  struct timespec t = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
  nanosleep(&t, NULL);
}

enum Way { BLOCKING, IALLREDUCE, PERSISTENT, BUSY, IDLE, SPIN_ALONE, SLEEP_ALONE };

/* One timed call of `way`; `compute` seconds of work between start and wait. */
static void one(int way, double* in, double* out, int n, MPI_Request* persistent, double compute) {
  MPI_Request q;
  switch (way) {
    case SPIN_ALONE: spin_for(compute); return;
    case SLEEP_ALONE: sleep_for(compute); return;
    case BLOCKING: MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); return;
    case PERSISTENT:
      MPI_Start(persistent);
      MPI_Wait(persistent, MPI_STATUS_IGNORE);
      return;
    default: MPI_Iallreduce(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &q);
  }
  if (way == BUSY) spin_for(compute);
  if (way == IDLE) sleep_for(compute);
  MPI_Wait(&q, MPI_STATUS_IGNORE);
}

/* Seconds per call, the slowest process's: as many calls as fit
 * `min_seconds` on rank 0, the same count everywhere. */
static double timed(int way, double* in, double* out, int n, MPI_Request* persistent,
                    double compute, double min_seconds) {
  for (int i = 0; i < 10; ++i) one(way, in, out, n, persistent, compute);
  long calls = 1;
  for (;;) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = now();
    for (long i = 0; i < calls; ++i) one(way, in, out, n, persistent, compute);
    double took = now() - start, slowest = 0;
    MPI_Allreduce(&took, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (slowest >= min_seconds || calls >= (1L << 26)) return slowest / (double)calls;
    calls *= slowest > 0 ? (long)(min_seconds / slowest * 1.2) + 1 : 8;
  }
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

/* Blocking, iallreduce and persistent in turns, `rounds` times: medians. */
static void latencies(double* in, double* out, int n, MPI_Request* persistent, double min_seconds,
                      int rounds, double median[3]) {
  double taken[3][64];
  for (int r = 0; r < rounds; ++r) {
    const int ways[3] = {BLOCKING, IALLREDUCE, PERSISTENT};
    for (int w = 0; w < 3; ++w) {
      taken[w][r] = timed(ways[w], in, out, n, persistent, 0, min_seconds / rounds);
    }
  }
  for (int w = 0; w < 3; ++w) {
    qsort(taken[w], (size_t)rounds, sizeof(double), by_value);
    median[w] = taken[w][rounds / 2];
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* sizes = "8,1024,65536,1048576";
  double min_seconds = 0.2;
  int rounds = 5;
  for (int a = 1; a + 1 < argc; a += 2) {
    if (strcmp(argv[a], "--sizes") == 0) sizes = argv[a + 1];
    if (strcmp(argv[a], "--min-time-ms") == 0) min_seconds = atof(argv[a + 1]) / 1000;
    if (strcmp(argv[a], "--rounds") == 0) rounds = atoi(argv[a + 1]);
  }
  if (rounds < 1 || rounds > 64) {
    if (rank == 0) fprintf(stderr, "dropin_nonblocking: --rounds %d: give 1 to 64\n", rounds);
    MPI_Finalize();
    return 2;
  }
  if (rank == 0) {
    printf(
        "# bytes  blocking_us  iallreduce_us  persistent_us  busy_overlap_%%  idle_overlap_%%\n");
  }
  /* A program's first blocking reduction builds the drop-in's team; a
   * persistent request made before it goes to MPI for good. */
  double one_in = 1, one_out = 0;
  MPI_Allreduce(&one_in, &one_out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  char* list = strdup(sizes);
  for (char* item = strtok(list, ","); item != NULL; item = strtok(NULL, ",")) {
    const long bytes = atol(item);
    const int n = (int)(bytes / (long)sizeof(double)) > 0 ? (int)(bytes / (long)sizeof(double)) : 1;
    double* in = malloc(sizeof(double) * (size_t)n);
    double* out = malloc(sizeof(double) * (size_t)n);
    for (int i = 0; i < n; ++i) in[i] = rank + i;
    MPI_Request persistent;
    MPIX_Allreduce_init(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                        &persistent);
    double median[3];
    latencies(in, out, n, &persistent, min_seconds, rounds, median);
    const double blocking = median[0], pure = median[1], again = median[2];
    double overlap[2];
    for (int k = 0; k < 2; ++k) {
      const double overall =
          timed(k == 0 ? BUSY : IDLE, in, out, n, &persistent, pure, min_seconds);
      const double compute =
          timed(k == 0 ? SPIN_ALONE : SLEEP_ALONE, in, out, n, &persistent, pure, min_seconds);
      const double o = 100 * (1 - (overall - compute) / pure);
      overlap[k] = o < 0 ? 0 : o > 100 ? 100 : o;
    }
    if (rank == 0) {
      printf("%7ld  %11.2f  %13.2f  %13.2f  %14.1f  %14.1f\n", (long)n * (long)sizeof(double),
             blocking * 1e6, pure * 1e6, again * 1e6, overlap[0], overlap[1]);
      fflush(stdout);
    }
    MPI_Request_free(&persistent);
    free(in);
    free(out);
  }
  free(list);
  MPI_Finalize();
  return 0;
}

/* Latency of MPI's reductions with and without the hreduce drop-in, in the
 * style of the OSU micro-benchmarks, in plain MPI: run it with
 * libhreduce_mpi.so preloaded (dropin_latency.sh does). For each size the
 * program times blocks of calls to MPI_X (served by the library) and to
 * PMPI_X (Open MPI's own) in turns on the same ranks, after a warm-up. A
 * block's time is the slowest rank's mean time per call; each side's row
 * gives the average, minimum and maximum over its blocks, and the ratio of
 * the averages (Open MPI's over hreduce's).
 *
 *   dropin_latency [--max-bytes B] [--min-time-ms T] [--collectives LIST]
 *                  [--back-to-back | --in-turns R] [--page-offsets IN,OUT]
 *                  [--fresh]
 *
 * LIST: comma-separated names from allreduce, reduce, reduce_scatter,
 * reduce_scatter_block, scan, exscan, each matched whole (default: all).
 *
 * Sizes go from 4 B to 4 MiB per rank (×4), MPI_FLOAT and MPI_SUM. First,
 * the cost of a communicator's first calls, where the library builds its
 * team. --back-to-back times MPI_X alone instead, call after call (below);
 * --in-turns R times that loop R rounds per cell, each round a block of
 * MPI_X and a block of PMPI_X (Open MPI's own) on the same ranks, and
 * prints the median of each and of the rounds' ratios, with the least and
 * greatest ratio: both sides in the host's same seconds, where separate
 * runs with and without the library may fall in different ones.
 * --page-offsets puts the send buffer IN bytes and the receive buffer OUT
 * bytes past a page boundary (0-4095 each), on every rank; by default both
 * come from malloc. Where the receiver lies 1-31 bytes past the sender
 * modulo a page, the CPU's string copy may crawl (bench:string_copy_alignment).
 * --fresh rewrites the send buffer before every call, on both sides (the
 * same values, copied from a copy: as an application that computes new
 * data between calls), so that no library finds another rank's input still
 * in its cache from the call before; the copy is in both sides' times. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/cli/byte_size.h"

enum Coll { ALLREDUCE, REDUCE, REDUCE_SCATTER, REDUCE_SCATTER_BLOCK, SCAN, EXSCAN, NCOLL };
static const char* names[] = {"allreduce", "reduce", "reduce_scatter", "reduce_scatter_block",
                              "scan",      "exscan"};

/* One call of MPI_X (ours) or PMPI_X: `count` elements (the scatters'
 * blocks in `counts`, reduce_scatter_block's counts[0]), root 0. */
static int collective(int coll, int ours, const float* in, float* out, int count, const int* counts,
                      MPI_Comm comm) {
  switch (coll) {
    case ALLREDUCE:
      return ours ? MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, comm)
                  : PMPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, comm);
    case REDUCE:
      return ours ? MPI_Reduce(in, out, count, MPI_FLOAT, MPI_SUM, 0, comm)
                  : PMPI_Reduce(in, out, count, MPI_FLOAT, MPI_SUM, 0, comm);
    case REDUCE_SCATTER:
      return ours ? MPI_Reduce_scatter(in, out, counts, MPI_FLOAT, MPI_SUM, comm)
                  : PMPI_Reduce_scatter(in, out, counts, MPI_FLOAT, MPI_SUM, comm);
    case REDUCE_SCATTER_BLOCK:
      return ours ? MPI_Reduce_scatter_block(in, out, counts[0], MPI_FLOAT, MPI_SUM, comm)
                  : PMPI_Reduce_scatter_block(in, out, counts[0], MPI_FLOAT, MPI_SUM, comm);
    case SCAN:
      return ours ? MPI_Scan(in, out, count, MPI_FLOAT, MPI_SUM, comm)
                  : PMPI_Scan(in, out, count, MPI_FLOAT, MPI_SUM, comm);
    default:
      return ours ? MPI_Exscan(in, out, count, MPI_FLOAT, MPI_SUM, comm)
                  : PMPI_Exscan(in, out, count, MPI_FLOAT, MPI_SUM, comm);
  }
}

/* The default loop's call: the scatters' blocks count / size each, at
 * least 1, the same on every call. */
static int call(int coll, int ours, const float* in, float* out, int count, MPI_Comm comm) {
  int size;
  MPI_Comm_size(comm, &size);
  static int counts[1024];
  for (int r = 0; r < size && r < 1024; ++r) counts[r] = count / size > 0 ? count / size : 1;
  return collective(coll, ours, in, out, count, counts, comm);
}

/* Average, minimum and maximum of n > 0 values. */
typedef struct {
  double avg, min, max;
} Stats;

static Stats stats_of(const double* values, int n) {
  Stats s = {0, values[0], values[0]};
  for (int i = 0; i < n; ++i) {
    s.avg += values[i] / n;
    if (values[i] < s.min) s.min = values[i];
    if (values[i] > s.max) s.max = values[i];
  }
  return s;
}

/* Which collectives `list` names (each whole, comma-separated), as flags;
 * NULL names all. Returns the first unknown name, or NULL. */
static const char* chosen(const char* list, int wanted[NCOLL]) {
  for (int c = 0; c < NCOLL; ++c) wanted[c] = list == NULL;
  if (list == NULL) return NULL;
  static char unknown[64];
  for (const char* at = list; *at != '\0';) {
    const size_t len = strcspn(at, ",");
    int known = 0;
    for (int c = 0; c < NCOLL; ++c) {
      if (len == strlen(names[c]) && strncmp(at, names[c], len) == 0) wanted[c] = known = 1;
    }
    if (!known && len > 0) {
      snprintf(unknown, sizeof unknown, "%.*s", (int)len, at);
      return unknown;
    }
    at += len + (at[len] == ',');
  }
  return NULL;
}

/* --fresh: what the send buffer is rewritten from before every call (NULL:
 * it is not). Every call sends at most its first `count` elements. */
static const float* fresh_source = NULL;

static void refresh(float* in, int count) {
  if (fresh_source != NULL) memcpy(in, fresh_source, sizeof(float) * (size_t)count);
}

/* Mean seconds per call of `iterations` calls, the slowest rank's. */
static double block(int coll, int ours, float* in, float* out, int count, int iterations) {
  PMPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int i = 0; i < iterations; ++i) {
    refresh(in, count);
    call(coll, ours, in, out, count, MPI_COMM_WORLD);
  }
  double mine = (MPI_Wtime() - start) / iterations, slowest = 0;
  PMPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

typedef struct {
  long max_bytes;
  double min_seconds;
  int wanted[NCOLL];
  int back_to_back;
  int rounds; /* --in-turns: rounds of MPI_X and PMPI_X back to back; 0: MPI_X alone */
  int fresh;
  long in_offset, out_offset; /* -1: malloc's */
} Options;

/* Reads the options into *o; 0 after rank 0 said what was wrong. */
static int parse_options(int argc, char** argv, int rank, Options* o) {
  o->max_bytes = 4L << 20;
  o->min_seconds = 0.2;
  o->back_to_back = 0;
  o->rounds = 0;
  o->fresh = 0;
  o->in_offset = o->out_offset = -1;
  const char* only = NULL;
  for (int a = 1; a < argc; ++a) {
    if (strcmp(argv[a], "--back-to-back") == 0) {
      o->back_to_back = 1;
      continue;
    }
    if (strcmp(argv[a], "--fresh") == 0) {
      o->fresh = 1;
      continue;
    }
    if (a + 1 == argc) break;
    if (strcmp(argv[a], "--max-bytes") == 0) {
      size_t bytes = 0;
      if (!hreduce_parse_byte_count(argv[a + 1], &bytes) || bytes < 4 || bytes > (256UL << 20)) {
        if (rank == 0) {
          fprintf(stderr, "dropin_latency: --max-bytes wants 4 B to 256 MiB, %s; got '%s'\n",
                  hreduce_byte_count_forms(), argv[a + 1]);
        }
        return 0;
      }
      o->max_bytes = (long)bytes;
    }
    if (strcmp(argv[a], "--min-time-ms") == 0) o->min_seconds = atof(argv[a + 1]) / 1000;
    if (strcmp(argv[a], "--collectives") == 0) only = argv[a + 1];
    if (strcmp(argv[a], "--in-turns") == 0) {
      char tail = 0;
      if (sscanf(argv[a + 1], "%d%c", &o->rounds, &tail) != 1 || o->rounds < 1 || o->rounds > 99) {
        if (rank == 0) {
          fprintf(stderr, "dropin_latency: --in-turns wants a number of rounds, 1-99; got '%s'\n",
                  argv[a + 1]);
        }
        return 0;
      }
      o->back_to_back = 1;
    }
    if (strcmp(argv[a], "--page-offsets") == 0) {
      char tail = 0;
      if (sscanf(argv[a + 1], "%ld,%ld%c", &o->in_offset, &o->out_offset, &tail) != 2 ||
          o->in_offset < 0 || o->in_offset > 4095 || o->out_offset < 0 || o->out_offset > 4095) {
        if (rank == 0) {
          fprintf(stderr, "dropin_latency: --page-offsets wants IN,OUT, each 0-4095; got '%s'\n",
                  argv[a + 1]);
        }
        return 0;
      }
    }
    ++a;
  }
  const char* unknown = chosen(only, o->wanted);
  if (unknown != NULL && rank == 0) {
    fprintf(stderr,
            "dropin_latency: --collectives: '%s' is not one of allreduce, reduce, "
            "reduce_scatter, reduce_scatter_block, scan, exscan\n",
            unknown);
  }
  return unknown == NULL;
}

/* A new communicator's first calls: the library hands the first 8 to PMPI
 * (HREDUCE_MPI_WARMUP_CALLS), builds the team at the ninth (collective),
 * then serves. */
static void print_first_calls(const float* in, float* out, int rank) {
  for (int c = 0; c < 2; ++c) {
    MPI_Comm fresh;
    MPI_Comm_dup(MPI_COMM_WORLD, &fresh);
    double first[10];
    for (int k = 0; k < 10; ++k) {
      PMPI_Barrier(fresh);
      const double start = MPI_Wtime();
      MPI_Allreduce(in, out, 2, MPI_FLOAT, MPI_SUM, fresh);
      const double mine = MPI_Wtime() - start;
      PMPI_Allreduce(&mine, &first[k], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }
    MPI_Comm_free(&fresh);
    if (rank == 0) {
      printf("# the %s new communicator's first 10 MPI_Allreduce calls of 8 B, us:",
             c == 0 ? "first" : "second");
      for (int k = 0; k < 10; ++k) printf(" %.1f", first[k] * 1e6);
      printf("\n");
    }
  }
}

/* One back-to-back block: `skip` calls, a barrier, then `iterations` calls
 * timed; the ranks' mean seconds per call, averaged over the ranks (as the
 * third-party benchmarks report), with their minimum and maximum at rank 0. */
static Stats back_to_back_block(int coll, int ours, float* in, float* out, int count,
                                const int* counts, long skip, long iterations, int size) {
  for (long i = 0; i < skip; ++i) {
    refresh(in, count);
    collective(coll, ours, in, out, count, counts, MPI_COMM_WORLD);
  }
  PMPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (long i = 0; i < iterations; ++i) {
    refresh(in, count);
    collective(coll, ours, in, out, count, counts, MPI_COMM_WORLD);
  }
  const double mine = (MPI_Wtime() - start) / (double)iterations;
  Stats s = {0, 0, 0};
  PMPI_Reduce(&mine, &s.avg, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  PMPI_Reduce(&mine, &s.min, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
  PMPI_Reduce(&mine, &s.max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  s.avg /= size;
  return s;
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* The median of n > 0 values (sorts them). */
static double median_of(double* values, int n) {
  qsort(values, (size_t)n, sizeof *values, by_value);
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

/* The back-to-back loop (--back-to-back), as the widely used third-party
 * micro-benchmarks time a collective: `iterations` calls of MPI_X, root 0,
 * on the same buffers, with no barrier between them, so that a process
 * that may leave a call early (a reduce's non-root) starts the next one at
 * once. A rank's time is its mean per call; a row gives the average,
 * minimum and maximum over the ranks. The same program runs with and
 * without the library preloaded (dropin_latency.sh --back-to-back), so the
 * calls are MPI_X there, never PMPI_X; with --in-turns both, in one run.
 * Sizes: the send buffer's bytes, ×2 from 4 B; a scatter's block is that
 * over the processes, rounded down (4 B on 2 processes: 0 elements each,
 * as those benchmarks call it). */
static void back_to_back(const Options* o, float* in, float* out, int rank, int size) {
  if (rank == 0) {
    if (o->rounds > 0) {
      printf("%-22s %10s %10s %10s %8s %8s %8s %7s\n", "# back-to-back in turns", "bytes",
             "MPI_X us", "PMPI_X us", "PMPI/MPI", "min", "max", "rounds");
    } else {
      printf("%-22s %10s %10s %10s %10s %10s\n", "# back-to-back", "bytes", "avg us", "min us",
             "max us", "calls");
    }
  }
  int* counts = malloc(sizeof(int) * (size_t)size);
  for (int c = 0; c < NCOLL; ++c) {
    if (!o->wanted[c]) continue;
    for (long bytes = 4; bytes <= o->max_bytes; bytes *= 2) {
      const int count = (int)(bytes / 4);
      /* reduce_scatter: the remainder to the first blocks; the block form:
       * the same rounded-down block everywhere. */
      for (int r = 0; r < size; ++r) {
        counts[r] = count / size + (c == REDUCE_SCATTER && r < count % size);
      }
      /* Some 10 ms of calls or more at the rates seen here (16 GB/s for
       * long vectors), within [100, 20000]; the warm-up also lets the
       * library build its team on the first cell. */
      long iterations = (256L << 20) / bytes;
      iterations = iterations < 100 ? 100 : iterations > 20000 ? 20000 : iterations;
      const long skip = iterations / 10 + 20;
      if (o->rounds == 0) {
        const Stats s = back_to_back_block(c, 1, in, out, count, counts, skip, iterations, size);
        if (rank == 0) {
          printf("%-22s %10ld %10.3f %10.3f %10.3f %10ld\n", names[c], bytes, s.avg * 1e6,
                 s.min * 1e6, s.max * 1e6, iterations);
          fflush(stdout);
        }
        continue;
      }
      /* In turns: each round times a block of MPI_X and one of PMPI_X, the
       * first of the two alternating, so that both sides see the host's
       * same seconds; the ratio is per round. */
      enum { kMaxRounds = 99 };
      double ours[kMaxRounds], theirs[kMaxRounds], ratios[kMaxRounds];
      const int rounds = o->rounds < kMaxRounds ? o->rounds : kMaxRounds;
      for (int k = 0; k < rounds; ++k) {
        for (int side = 0; side < 2; ++side) {
          const int mine = (side + k) % 2 == 0;
          const Stats s =
              back_to_back_block(c, mine, in, out, count, counts, skip, iterations, size);
          (mine ? ours : theirs)[k] = s.avg;
        }
        ratios[k] = theirs[k] / ours[k];
      }
      if (rank == 0) {
        const double ratio = median_of(ratios, rounds); /* sorts ratios */
        printf("%-22s %10ld %10.3f %10.3f %8.2f %8.2f %8.2f %7d\n", names[c], bytes,
               median_of(ours, rounds) * 1e6, median_of(theirs, rounds) * 1e6, ratio, ratios[0],
               ratios[rounds - 1], rounds);
        fflush(stdout);
      }
    }
  }
  free(counts);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Options options;
  if (!parse_options(argc, argv, rank, &options)) {
    MPI_Finalize();
    return 2;
  }
  const long max_bytes = options.max_bytes;
  const double min_seconds = options.min_seconds;
  const int* wanted = options.wanted;
  const int max_count = (int)(max_bytes / 4) * size + size;
  const size_t buffer_bytes = sizeof(float) * (size_t)max_count;
  /* malloc's, or page-aligned memory with the offsets asked for. */
  char* in_memory =
      options.in_offset < 0 ? malloc(buffer_bytes) : aligned_alloc(4096, buffer_bytes + 2 * 4096);
  char* out_memory =
      options.out_offset < 0 ? malloc(buffer_bytes) : aligned_alloc(4096, buffer_bytes + 2 * 4096);
  float* in = (float*)(in_memory + (options.in_offset < 0 ? 0 : options.in_offset));
  float* out = (float*)(out_memory + (options.out_offset < 0 ? 0 : options.out_offset));
  for (int i = 0; i < max_count; ++i) in[i] = (float)((rank + i) % 7);
  float* source = NULL;
  if (options.fresh) {
    source = malloc(buffer_bytes);
    memcpy(source, in, buffer_bytes);
    fresh_source = source;
  }
  if (options.back_to_back) {
    back_to_back(&options, in, out, rank, size);
    free(source);
    free(in_memory);
    free(out_memory);
    MPI_Finalize();
    return 0;
  }

  print_first_calls(in, out, rank);
  if (rank == 0) {
    printf("%-22s %10s %12s %10s %10s %12s %10s %10s %8s\n", "# collective", "bytes", "hreduce avg",
           "min", "max", "mpi avg", "min", "max", "mpi/hr");
  }

  for (int c = 0; c < NCOLL; ++c) {
    if (!wanted[c]) continue;
    for (long bytes = 4; bytes <= max_bytes; bytes *= 4) {
      const int count =
          (int)(bytes / 4) * (c == REDUCE_SCATTER_BLOCK || c == REDUCE_SCATTER ? size : 1);
      /* Warm-up, both sides: more calls than the library hands to PMPI
       * before it builds the communicator's team (HREDUCE_MPI_WARMUP_CALLS,
       * 8), so that no timed block holds the build. With 5, the first
       * cell's first block did, and its average read up to 2x too slow. */
      for (int w = 0; w < 12; ++w) {
        call(c, 1, in, out, count, MPI_COMM_WORLD);
        call(c, 0, in, out, count, MPI_COMM_WORLD);
      }
      /* Blocks long enough to time, then as many pairs as min_seconds allows. */
      int iterations = 1;
      while (block(c, 0, in, out, count, iterations) * iterations < 1e-3 &&
             iterations < (1 << 20)) {
        iterations *= 2;
      }
      enum { kMaxBlocks = 41 };
      double ours[kMaxBlocks], theirs[kMaxBlocks];
      int blocks = 0;
      double spent = 0;
      while (blocks < kMaxBlocks && (blocks < 5 || spent < min_seconds)) {
        ours[blocks] = block(c, 1, in, out, count, iterations);
        theirs[blocks] = block(c, 0, in, out, count, iterations);
        spent += (ours[blocks] + theirs[blocks]) * iterations;
        ++blocks;
      }
      /* Every rank holds the same block times (the slowest rank's). */
      const Stats mine = stats_of(ours, blocks), mpi = stats_of(theirs, blocks);
      if (rank == 0) {
        printf("%-22s %10ld %12.2f %10.2f %10.2f %12.2f %10.2f %10.2f %8.2f\n", names[c], bytes,
               mine.avg * 1e6, mine.min * 1e6, mine.max * 1e6, mpi.avg * 1e6, mpi.min * 1e6,
               mpi.max * 1e6, mpi.avg / mine.avg);
        fflush(stdout);
      }
    }
  }
  free(source);
  free(in_memory);
  free(out_memory);
  MPI_Finalize();
  return 0;
}

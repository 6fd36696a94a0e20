/* The byte-count parser of byte_size.hpp for C programs (the MPI drop-in's
 * latency benchmark): the same units, K = 1000, Ki = 1024, M, Mi, G, Gi,
 * optional B. */
#ifndef HREDUCE_SRC_CLI_BYTE_SIZE_H_
#define HREDUCE_SRC_CLI_BYTE_SIZE_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 with *bytes set when `text` is a byte count; 0 (and *bytes untouched)
 * otherwise. */
int hreduce_parse_byte_count(const char* text, size_t* bytes);

/* What a byte count may look like, for error messages. */
const char* hreduce_byte_count_forms(void);

#ifdef __cplusplus
}
#endif

#endif /* HREDUCE_SRC_CLI_BYTE_SIZE_H_ */

// gzip compression for the pprof export: Foundation on Linux has none, and zlib (Debian's zlib1g-dev) is the
// compressor Go's runtime/pprof output is read back with.
#ifndef STALLWATCH_ZLIB_H
#define STALLWATCH_ZLIB_H

#include <stddef.h>
#include <stdint.h>

/// Compresses `length` bytes into a gzip member (RFC 1952) at `output`, which holds `capacity` bytes.
/// Returns the compressed size, or 0 if `capacity` is too small or zlib fails. `sw_gzip_bound` is a capacity
/// that always suffices.
size_t sw_gzip(const uint8_t *input, size_t length, uint8_t *output, size_t capacity);
size_t sw_gzip_bound(size_t length);

#endif

// The buckets of the busy-period histogram: the agent's C board counts into them, StallwatchCore's
// `LatencyHistogram` reads and merges them. Log-linear: each power of two of microseconds in 8 equal parts.
#ifndef SW_LATENCY_HISTOGRAM_H
#define SW_LATENCY_HISTOGRAM_H

#include "sw_loop_phase.h"

/// The buckets, from 1 µs to over an hour, whatever the run's length; each power of two's equal parts, and their bits.
enum {
    SW_HISTOGRAM_BUCKETS = 256,
    SW_HISTOGRAM_SUB_BUCKET_BITS = 3,
    SW_HISTOGRAM_SUB_BUCKETS = 1 << SW_HISTOGRAM_SUB_BUCKET_BITS,
};

/// The bucket of a duration of `nanoseconds`.
SW_MODEL_INLINE int sw_histogram_bucket(uint64_t nanoseconds) {
    uint64_t micros = nanoseconds / 1000;
    if (micros < SW_HISTOGRAM_SUB_BUCKETS) return (int)micros;
    int magnitude = 63 - __builtin_clzll(micros);  // floor(log2), at least the sub-bucket bits
    int shift = magnitude - SW_HISTOGRAM_SUB_BUCKET_BITS;
    int sub = (int)((micros >> shift) & (SW_HISTOGRAM_SUB_BUCKETS - 1));
    int index = (shift + 1) * SW_HISTOGRAM_SUB_BUCKETS + sub;
    return index < SW_HISTOGRAM_BUCKETS - 1 ? index : SW_HISTOGRAM_BUCKETS - 1;
}

#endif

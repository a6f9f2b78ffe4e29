// The one zlib call stallwatch makes: deflate with a gzip header and trailer (windowBits 15 + 16).
#include "stallwatch_zlib.h"

#include <zlib.h>

size_t sw_gzip_bound(size_t length) {
    // deflateBound's stored-block worst case plus the gzip header and trailer.
    return length + length / 1000 + 64 + 18;
}

size_t sw_gzip(const uint8_t *input, size_t length, uint8_t *output, size_t capacity) {
    z_stream stream = {0};
    if (deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        return 0;
    }
    stream.next_in = (Bytef *)input;
    stream.avail_in = (uInt)length;
    stream.next_out = output;
    stream.avail_out = (uInt)capacity;
    int status = deflate(&stream, Z_FINISH);
    size_t written = stream.total_out;
    deflateEnd(&stream);
    return status == Z_STREAM_END ? written : 0;
}

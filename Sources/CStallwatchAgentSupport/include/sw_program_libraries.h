// The libraries the program itself needs, told apart from the ones only the agent brought (program_libraries.c).
#ifndef SW_PROGRAM_LIBRARIES_H
#define SW_PROGRAM_LIBRARIES_H

#include <stddef.h>

/// The file names of the shared libraries the program itself needs: the DT_NEEDED entries reachable from the
/// executable, matched to the loaded objects (what only LD_PRELOAD brought in is not among them). Writes them
/// NUL-separated into `buffer` (names that do not fit are left out) and returns how many it wrote, or -1.
int sw_agent_program_libraries(char *buffer, size_t size);

#endif

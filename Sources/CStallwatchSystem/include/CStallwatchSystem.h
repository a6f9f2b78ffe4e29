// Linux calls that Swift cannot make through its Glibc module (GNU extensions, variadic functions,
// dladdr), one header per subject. Only plain C types and sw_-prefixed names cross these headers.
#ifndef C_STALLWATCH_SYSTEM_H
#define C_STALLWATCH_SYSTEM_H

#include "sw_system_descriptors.h"
#include "sw_system_process.h"
#include "sw_system_signals.h"

#endif

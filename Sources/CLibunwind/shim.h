// The libunwind headers the remote unwinder needs: the generic (remote-capable) API and the ptrace accessors.
#include <libunwind.h>
#include <libunwind-ptrace.h>

#include "CLibraryUser.h"

#include <sys/prctl.h>
#include <unistd.h>

int library_user_make_non_dumpable(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }

int library_user_fork(void) { return fork(); }

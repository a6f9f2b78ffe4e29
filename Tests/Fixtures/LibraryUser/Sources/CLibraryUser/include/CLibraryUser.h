// prctl is variadic, which Swift cannot call: the fixture's one C call.
#ifndef C_LIBRARY_USER_H
#define C_LIBRARY_USER_H
/// prctl(PR_SET_DUMPABLE, 0): only a tracer with CAP_SYS_PTRACE may trace the app from now on.
int library_user_make_non_dumpable(void);
#endif

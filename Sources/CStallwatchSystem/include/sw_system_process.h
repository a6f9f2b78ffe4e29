// What this process can learn of itself and another: the vDSO's symbols, which library defines a symbol, another
// process's memory, the calling thread's name and id.
#ifndef SW_SYSTEM_PROCESS_H
#define SW_SYSTEM_PROCESS_H

/// The name of the vDSO function containing `offset` (bytes from the vDSO's start), or NULL.
///
/// Every process on one kernel maps the same vDSO image, so another process's vDSO addresses are named by
/// looking up the same offset in ours (dladdr knows the vDSO's dynamic symbols; Swift cannot call dladdr).
const char *sw_vdso_symbol(unsigned long offset);

/// The size of this process's vDSO image in bytes (0 if there is none), to check it matches another's.
unsigned long sw_vdso_size(void);

/// The path of the shared object that defines `symbol` in this process (dlsym + dladdr), or NULL: e.g. which
/// libswiftCore.so this process runs on. NULL too when the symbol is linked into the executable itself.
const char *sw_library_defining(const char *symbol);

/// process_vm_readv(2) of one range of process `pid` (this process's own pid works without ptrace permission):
/// reads without stopping the process and fails with EFAULT instead of faulting on a bad address. Returns the bytes
/// read, or -1 (errno set). Swift's Glibc module does not import it (it needs _GNU_SOURCE).
long sw_read_process_memory(int pid, unsigned long address, void *buffer, unsigned long length);

/// Names the calling thread (pthread_setname_np; at most 15 bytes are kept). Returns 0 or an error number.
int sw_set_thread_name(const char *name);

/// The calling thread's id (gettid).
int sw_thread_id(void);

#endif

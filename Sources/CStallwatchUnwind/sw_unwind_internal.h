// Private declarations shared by the remote capture and the vDSO unwind-table code.
#ifndef SW_UNWIND_INTERNAL_H
#define SW_UNWIND_INTERNAL_H

#include <libunwind.h>
#include <stdint.h>
#include <sys/types.h>

/// Where the vDSO's unwind table lives in a target process. The vDSO is one image per kernel, so
/// every offset comes from our own copy; only the base differs between processes.
typedef struct sw_vdso_target {
    int valid;              ///< 0: no [vdso], or it does not match ours; leave it to libunwind
    uint64_t start, end;    ///< the target's [vdso] mapping
    uint64_t eh_frame_hdr;  ///< target address of .eh_frame_hdr (segbase of the search table)
    uint64_t table;         ///< target address of the binary-search table inside it
    uint64_t fde_count;     ///< entries in that table (8 bytes each)
    const uint8_t *local;   ///< our own copy of the same bytes (start maps to local)
} sw_vdso_target;

/// Reads /proc/<pid>/maps and fills `out` (valid = 0 when the vDSO cannot be handled).
void sw_vdso_locate(pid_t pid, sw_vdso_target *out);

/// Looks up unwind info for an `ip` inside the target's vDSO; same contract as `find_proc_info`.
int sw_vdso_find_proc_info(const sw_vdso_target *vdso, unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
                           int need_unwind_info, void *arg);

/// Where an image's unwind table lives in the target's own memory: its `.eh_frame_hdr` is part of a loaded
/// segment, so it can be read without the file (deleted, replaced, or in another mount namespace).
typedef struct sw_memory_table {
    int state;              ///< 0: not looked for yet; 1: found; -1: none
    uint64_t eh_frame_hdr;  ///< target address (segbase of the search table)
    uint64_t table;         ///< target address of the binary-search table
    uint64_t fde_count;
} sw_memory_table;

/// An image's `.debug_frame`, read from its file when a frame in it has no other unwind rule.
typedef struct sw_debug_frame {
    int state;      ///< 0: not read yet; 1: read; -1: none
    uint8_t *data;  ///< the section's bytes (malloc'ed)
    size_t size;
    uint64_t bias;  ///< load bias: runtime address minus the link-time address the section's FDEs use
} sw_debug_frame;

/// A code mapping of the target and the libunwind-ptrace handle caching its ELF file.
typedef struct sw_image {
    uint64_t start, end;
    uint64_t base;  // start of the same file's mapping at offset 0 (its ELF header), 0 if unknown
    void *upt;      // _UPT_create(pid), opened lazily
    sw_memory_table memory;
    sw_debug_frame debug_frame;
} sw_image;

enum { SW_MAX_IMAGES = 256 };

typedef struct sw_images {
    pid_t pid;
    int count;
    sw_image list[SW_MAX_IMAGES];
} sw_images;

/// Reads the target's executable file mappings; for the same pid, unchanged mappings keep their handles.
void sw_images_load(sw_images *images, pid_t pid);
/// Closes all handles.
void sw_images_clear(sw_images *images);
/// The handle for the image containing `ip`, or NULL when no known image does.
void *sw_images_handle(sw_images *images, uint64_t ip);
/// The image containing `ip`, or NULL.
sw_image *sw_images_find(sw_images *images, uint64_t ip);

/// Looks up unwind info for `ip` in `image` from the `.eh_frame_hdr` in the target's memory, for when its ELF file
/// cannot be opened; same contract as `find_proc_info`. Reads the target through `as`'s accessors with `arg`.
int sw_memory_find_proc_info(sw_image *image, unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
                             int need_unwind_info, void *arg);
/// Finds every image's `.eh_frame_hdr` in the target's memory (a few small reads each; the process may be running).
void sw_images_locate_tables(sw_images *images, unw_addr_space_t as, void *arg);
/// Opens every image's ELF file and unwind table not opened yet, so a capture does not do it while the
/// target is stopped. Reads target memory through `space`'s accessors: call with the sampler active.
void sw_images_prewarm(sw_images *images, unw_addr_space_t space);

/// One step out of a frame at `pc` in `image` by its `.debug_frame` rules: `values` holds the frame's registers by
/// DWARF number (0-15, 16 the return address, i.e. the pc) and becomes the caller's. Reads the stack through
/// `read_word`. 1 on success; 0 when the image has no such rule (then `values` is unchanged).
int sw_debug_frame_step(sw_image *image, pid_t pid, uint64_t pc, uint64_t values[17],
                        int (*read_word)(void *context, uint64_t address, uint64_t *value), void *context);
/// Frees what `sw_debug_frame_step` read for `image`.
void sw_debug_frame_clear(sw_image *image);

#endif

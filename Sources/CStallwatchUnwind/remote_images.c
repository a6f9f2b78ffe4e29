// One libunwind-ptrace handle per code image of the target, opened before the target is stopped.
//
// Why: a _UPT_create handle caches exactly one ELF image. Stacks alternate between images (app ->
// Foundation -> app -> libc), and every switch made the single handle re-read /proc/PID/maps and
// re-open and re-map an ELF file while the target was stopped. With a handle per image, each file
// is opened once, and we open them all ahead of the first capture of a process, outside the stop
// window (process_vm_readv reads a running process as well as a stopped one).
#include "sw_unwind_internal.h"

#include <libunwind-ptrace.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sw_images_clear(sw_images *images) {
    for (int i = 0; i < images->count; i++) {
        if (images->list[i].upt != NULL) _UPT_destroy(images->list[i].upt);
        sw_debug_frame_clear(&images->list[i]);
    }
    images->count = 0;
    images->pid = 0;
}

void sw_images_load(sw_images *images, pid_t pid) {
    // Reloading the same process keeps the handles of mappings that did not change.
    sw_images old = *images;
    if (old.pid != pid) sw_images_clear(&old);
    images->pid = pid;
    images->count = 0;
    char path[64], line[4096 + 128], file_path[4096 + 128] = "";
    unsigned long long file_base = 0;
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *maps = fopen(path, "re");
    while (maps != NULL && fgets(line, sizeof line, maps) != NULL && images->count < SW_MAX_IMAGES) {
        unsigned long long start, end, offset;
        char perms[8];
        int name_at = 0;
        if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &offset, &name_at) != 4) continue;
        if (line[name_at] != '/') continue;
        // The file's first mapping holds its ELF header; its code follows it in the maps.
        if (offset == 0) {
            file_base = start;
            snprintf(file_path, sizeof file_path, "%s", line + name_at);
        }
        // Only file-backed code: [vdso] is handled separately, anonymous JIT code has no tables.
        if (perms[2] != 'x') continue;
        sw_image image = {start, end,          strcmp(file_path, line + name_at) == 0 ? file_base : 0,
                          NULL,  {0, 0, 0, 0}, {0, NULL, 0, 0}};
        for (int i = 0; i < old.count; i++) {
            if (old.list[i].start == start && old.list[i].end == end) {
                image.upt = old.list[i].upt;
                image.memory = old.list[i].memory;
                image.debug_frame = old.list[i].debug_frame;
                old.list[i].upt = NULL;
                old.list[i].debug_frame.data = NULL;
                break;
            }
        }
        images->list[images->count++] = image;
    }
    if (maps != NULL) fclose(maps);
    sw_images_clear(&old);
}

sw_image *sw_images_find(sw_images *images, uint64_t ip) {
    for (int i = 0; i < images->count; i++) {
        if (ip >= images->list[i].start && ip < images->list[i].end) return &images->list[i];
    }
    return NULL;
}

void *sw_images_handle(sw_images *images, uint64_t ip) {
    sw_image *image = sw_images_find(images, ip);
    if (image == NULL) return NULL;
    if (image->upt == NULL) image->upt = _UPT_create(images->pid);
    return image->upt;
}

void sw_images_prewarm(sw_images *images, unw_addr_space_t space) {
    for (int i = 0; i < images->count; i++) {
        sw_image *image = &images->list[i];
        if (image->upt != NULL) continue;  // opened before
        if ((image->upt = _UPT_create(images->pid)) == NULL) continue;
        // Any address will do: the handle maps the ELF file and its table even if no FDE matches.
        unw_proc_info_t pi;
        memset(&pi, 0, sizeof pi);
        (void)_UPT_find_proc_info(space, image->start, &pi, 0, image->upt);
    }
}

// What the workload's own program links, read from the loaded objects' dynamic sections in memory.
//
// Why: the agent is preloaded into every program of a workload, wrappers (`sh -c`, `env`, `setpriv`) included,
// and brings Foundation with it. Its watcher thread is harmful in a program that has no event loop to watch:
// glibc broadcasts set-id calls to every thread, and a `setpriv --reuid` whose agent thread lost its capabilities
// (PR_SET_KEEPCAPS is per thread) aborts. Whether the program itself needs the libraries that provide a run loop
// is the graph of DT_NEEDED entries reachable from the executable, not the set of loaded objects: the agent's
// own dependencies are loaded in every program.
#define _GNU_SOURCE
#include "CStallwatchAgentSupport.h"

#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <string.h>

enum { max_objects = 1024, max_needed_per_object = 256 };

struct loaded_object {
    const char *path;
    ElfW(Addr) base;
    const ElfW(Dyn) *dynamic;
    ElfW(Addr) lowest;
    ElfW(Addr) highest;
};

struct object_list {
    struct loaded_object objects[max_objects];
    int count;
};

static int collect_object(struct dl_phdr_info *info, size_t size, void *context) {
    (void)size;
    struct object_list *list = context;
    if (list->count >= max_objects) return 1;
    struct loaded_object *object = &list->objects[list->count];
    memset(object, 0, sizeof *object);
    object->path = info->dlpi_name != NULL ? info->dlpi_name : "";
    object->base = info->dlpi_addr;
    object->lowest = (ElfW(Addr))-1;
    for (ElfW(Half) index = 0; index < info->dlpi_phnum; index++) {
        const ElfW(Phdr) *header = &info->dlpi_phdr[index];
        if (header->p_type == PT_DYNAMIC) object->dynamic = (const ElfW(Dyn) *)(info->dlpi_addr + header->p_vaddr);
        if (header->p_type != PT_LOAD) continue;
        ElfW(Addr) start = info->dlpi_addr + header->p_vaddr;
        if (start < object->lowest) object->lowest = start;
        if (start + header->p_memsz > object->highest) object->highest = start + header->p_memsz;
    }
    list->count++;
    return 0;
}

// The dynamic loader relocates DT_STRTAB in place on x86_64 but not in every object (the vDSO's is read-only):
// an address outside the object's own segments is still a link-time address.
static const char *string_table(const struct loaded_object *object) {
    for (const ElfW(Dyn) *entry = object->dynamic; entry->d_tag != DT_NULL; entry++) {
        if (entry->d_tag != DT_STRTAB) continue;
        ElfW(Addr) address = entry->d_un.d_ptr;
        if (address < object->lowest || address >= object->highest) address += object->base;
        if (address < object->lowest || address >= object->highest) return NULL;
        return (const char *)address;
    }
    return NULL;
}

static const char *base_name(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

// The loaded object a DT_NEEDED entry names: by its soname or its file's name.
static int find_object(const struct object_list *list, const char *needed) {
    for (int index = 1; index < list->count; index++) {
        const struct loaded_object *object = &list->objects[index];
        if (strcmp(base_name(object->path), needed) == 0) return index;
        const char *strings = object->dynamic != NULL ? string_table(object) : NULL;
        if (strings == NULL) continue;
        for (const ElfW(Dyn) *entry = object->dynamic; entry->d_tag != DT_NULL; entry++) {
            if (entry->d_tag == DT_SONAME && strcmp(strings + entry->d_un.d_val, needed) == 0) return index;
        }
    }
    return -1;
}

int sw_agent_program_libraries(char *buffer, size_t size) {
    static struct object_list list;
    static unsigned char reachable[max_objects];
    static int queue[max_objects];
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    if (buffer == NULL || size == 0) return -1;
    pthread_mutex_lock(&lock);
    list.count = 0;
    memset(reachable, 0, sizeof reachable);
    dl_iterate_phdr(collect_object, &list);
    // The first object dl_iterate_phdr reports is the executable.
    int found = 0, head = 0, tail = 0;
    size_t used = 0;
    if (list.count > 0) {
        reachable[0] = 1;
        queue[tail++] = 0;
    }
    while (head < tail) {
        const struct loaded_object *object = &list.objects[queue[head++]];
        const char *strings = object->dynamic != NULL ? string_table(object) : NULL;
        if (strings == NULL) continue;
        int entries = 0;
        for (const ElfW(Dyn) *entry = object->dynamic; entry->d_tag != DT_NULL && entries < max_needed_per_object;
             entry++) {
            if (entry->d_tag != DT_NEEDED) continue;
            entries++;
            int index = find_object(&list, strings + entry->d_un.d_val);
            if (index < 0 || reachable[index]) continue;
            reachable[index] = 1;
            queue[tail++] = index;
            const char *name = base_name(list.objects[index].path);
            size_t length = strlen(name);
            if (used + length + 1 > size) continue;
            memcpy(buffer + used, name, length + 1);
            used += length + 1;
            found++;
        }
    }
    pthread_mutex_unlock(&lock);
    return found;
}

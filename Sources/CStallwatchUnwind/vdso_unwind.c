// Unwind info for the vDSO of another process, and for images whose file cannot be opened.
//
// Why this exists: libunwind-ptrace 1.6.2 finds unwind tables by opening the ELF file behind each
// mapping in /proc/PID/maps. The vDSO has no file, so a thread stopped inside clock_gettime() or
// gettimeofday() (common: timing loops, spinning waits) unwinds one frame and then follows frame
// pointers into garbage. The vDSO is the same image in every process on one kernel, so we parse
// our own copy (from AT_SYSINFO_EHDR) for its .eh_frame_hdr, rebase the addresses onto the
// target's [vdso] mapping and hand libunwind a remote table to binary-search, exactly as
// _UPT_find_proc_info does for a file-backed library.
#include "sw_unwind_internal.h"

#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>

// DWARF pointer encodings (LSB Core, .eh_frame_hdr); elfutils' <dwarf.h> is not a dependency.
enum {
    DW_EH_PE_absptr = 0x00,
    DW_EH_PE_uleb128 = 0x01,
    DW_EH_PE_udata2 = 0x02,
    DW_EH_PE_udata4 = 0x03,
    DW_EH_PE_udata8 = 0x04,
    DW_EH_PE_sleb128 = 0x09,
    DW_EH_PE_sdata2 = 0x0a,
    DW_EH_PE_sdata4 = 0x0b,
    DW_EH_PE_sdata8 = 0x0c,
    DW_EH_PE_datarel = 0x30,
    DW_EH_PE_omit = 0xff,
};

// Exported by libunwind-x86_64 (libunwind-generic) but declared in no public header.
extern int _Ux86_64_dwarf_search_unwind_table(unw_addr_space_t as, unw_word_t ip, unw_dyn_info_t *di,
                                              unw_proc_info_t *pi, int need_unwind_info, void *arg);

/// Offsets inside our own vDSO, computed once.
static struct {
    int valid;
    const uint8_t *base;  // our vDSO's first byte (AT_SYSINFO_EHDR)
    uint64_t size;        // bytes covered by its PT_LOAD segments, page-rounded
    uint64_t eh_hdr_off;  // .eh_frame_hdr, relative to base
    uint64_t table_off;   // the search table, relative to base
    uint64_t fde_count;
} local_vdso;

static pthread_once_t local_vdso_once = PTHREAD_ONCE_INIT;

/// Decodes one DWARF EH pointer of a fixed-size or LEB128 format at *p and advances *p.
/// Only the value's size matters for the pointers we skip; fde_count is absolute (udata4 in practice).
static int read_encoded(const uint8_t **p, const uint8_t *end, uint8_t encoding, uint64_t *value) {
    const uint8_t *q = *p;
    uint64_t v = 0;
    if (encoding == DW_EH_PE_omit) return -1;
    switch (encoding & 0x0f) {
    case DW_EH_PE_absptr:
    case DW_EH_PE_udata8:
    case DW_EH_PE_sdata8:
        if (q + 8 > end) return -1;
        memcpy(&v, q, 8), q += 8;
        break;
    case DW_EH_PE_udata4:
    case DW_EH_PE_sdata4: {
        uint32_t u;
        if (q + 4 > end) return -1;
        memcpy(&u, q, 4), q += 4;
        v = (encoding & 0x0f) == DW_EH_PE_sdata4 ? (uint64_t)(int64_t)(int32_t)u : u;
        break;
    }
    case DW_EH_PE_udata2:
    case DW_EH_PE_sdata2: {
        uint16_t u;
        if (q + 2 > end) return -1;
        memcpy(&u, q, 2), q += 2;
        v = (encoding & 0x0f) == DW_EH_PE_sdata2 ? (uint64_t)(int64_t)(int16_t)u : u;
        break;
    }
    case DW_EH_PE_uleb128:
    case DW_EH_PE_sleb128: {
        unsigned shift = 0;
        uint8_t byte;
        do {
            if (q >= end || shift > 63) return -1;
            byte = *q++;
            v |= (uint64_t)(byte & 0x7f) << shift;
            shift += 7;
        } while (byte & 0x80);
        if ((encoding & 0x0f) == DW_EH_PE_sleb128 && shift < 64 && (byte & 0x40)) v |= ~0ULL << shift;
        break;
    }
    default: return -1;
    }
    *p = q;
    *value = v;
    return 0;
}

static void compute_local_vdso(void) {
    const uint8_t *base = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
    if (base == NULL) return;
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)base;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64) return;

    // The vDSO is linked at 0 on x86_64, but do not rely on it: addresses are vaddr - first_load + base.
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(base + eh->e_phoff);
    uint64_t lo = UINT64_MAX, hi = 0, eh_vaddr = 0;
    int have_eh = 0;
    for (int i = 0; i < eh->e_phnum; i++) {
        if (ph[i].p_type == PT_LOAD) {
            if (ph[i].p_vaddr - ph[i].p_offset < lo) lo = ph[i].p_vaddr - ph[i].p_offset;
            if (ph[i].p_vaddr + ph[i].p_memsz > hi) hi = ph[i].p_vaddr + ph[i].p_memsz;
        } else if (ph[i].p_type == PT_GNU_EH_FRAME) {
            eh_vaddr = ph[i].p_vaddr;
            have_eh = 1;
        }
    }
    if (!have_eh || lo == UINT64_MAX) return;
    uint64_t size = (hi - lo + 4095) & ~4095ULL;
    uint64_t eh_off = eh_vaddr - lo;
    if (eh_off + 4 > size) return;

    // .eh_frame_hdr: version, eh_frame_ptr_enc, fde_count_enc, table_enc, eh_frame_ptr, fde_count, table.
    const uint8_t *hdr = base + eh_off, *end = base + size, *p = hdr + 4;
    uint64_t eh_frame_ptr, fde_count;
    if (hdr[0] != 1) return;
    // libunwind's binary search only understands 8-byte entries of datarel|sdata4.
    if (hdr[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4)) return;
    if (read_encoded(&p, end, hdr[1], &eh_frame_ptr) != 0) return;
    if (read_encoded(&p, end, hdr[2], &fde_count) != 0) return;
    if (fde_count == 0 || fde_count > (uint64_t)(end - p) / 8) return;

    local_vdso.base = base;
    local_vdso.size = size;
    local_vdso.eh_hdr_off = eh_off;
    local_vdso.table_off = (uint64_t)(p - base);
    local_vdso.fde_count = fde_count;
    local_vdso.valid = 1;
}

void sw_vdso_locate(pid_t pid, sw_vdso_target *out) {
    memset(out, 0, sizeof *out);
    pthread_once(&local_vdso_once, compute_local_vdso);
    if (!local_vdso.valid) return;

    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *maps = fopen(path, "re");
    if (maps == NULL) return;
    unsigned long long start = 0, end = 0;
    int found = 0;
    while (fgets(line, sizeof line, maps) != NULL) {
        if (strstr(line, "[vdso]") != NULL && sscanf(line, "%llx-%llx", &start, &end) == 2) {
            found = 1;
            break;
        }
    }
    fclose(maps);
    // A different size means a different image (a 32-bit target, say): let libunwind do what it can.
    if (!found || end - start != local_vdso.size) return;

    out->start = start;
    out->end = end;
    out->eh_frame_hdr = start + local_vdso.eh_hdr_off;
    out->table = start + local_vdso.table_off;
    out->fde_count = local_vdso.fde_count;
    out->local = local_vdso.base;
    out->valid = 1;
}

int sw_vdso_find_proc_info(const sw_vdso_target *vdso, unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
                           int need_unwind_info, void *arg) {
    unw_dyn_info_t di;
    memset(&di, 0, sizeof di);
    di.start_ip = vdso->start;
    di.end_ip = vdso->end;
    di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
    di.u.rti.segbase = vdso->eh_frame_hdr;  // datarel entries are relative to .eh_frame_hdr
    di.u.rti.table_data = vdso->table;
    di.u.rti.table_len = vdso->fde_count * 8 / sizeof(unw_word_t);
    // The table, FDEs and CIEs are read through `as`'s accessors with `arg`, i.e. from the target.
    // On success pi->unwind_info comes from libunwind's own pool; its DWARF layer frees it for
    // table-format info and never calls our put_unwind_info, so we own nothing here.
    return _Ux86_64_dwarf_search_unwind_table(as, ip, &di, pi, need_unwind_info, arg);
}

// MARK: - Unwind tables read from the target's memory

/// Reads `length` bytes of the target at `address`, a word at a time, through the address space's accessors.
static int read_target(unw_addr_space_t as, void *arg, uint64_t address, void *buffer, size_t length) {
    unw_accessors_t *accessors = unw_get_accessors(as);
    uint8_t *out = buffer;
    for (size_t done = 0; done < length; done += sizeof(unw_word_t)) {
        unw_word_t word;
        if (accessors->access_mem(as, (unw_word_t)(address + done), &word, 0, arg) < 0) return -1;
        size_t take = length - done < sizeof word ? length - done : sizeof word;
        memcpy(out + done, &word, take);
    }
    return 0;
}

/// Finds the image's `.eh_frame_hdr` through the ELF and program headers mapped at its base.
///
/// An image without such a table is marked so (state -1); one whose memory could not be read is left to be tried
/// again (state 0), at the next lookup.
static void locate_memory_table(sw_image *image, unw_addr_space_t as, void *arg) {
    image->memory.state = -1;
    if (image->base == 0) return;
    ElfW(Ehdr) header;
    if (read_target(as, arg, image->base, &header, sizeof header) != 0) {
        image->memory.state = 0;
        return;
    }
    if (memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64) return;
    if (header.e_phentsize != sizeof(ElfW(Phdr)) || header.e_phnum == 0 || header.e_phnum > 64) return;
    ElfW(Phdr) segments[64];
    if (read_target(as, arg, image->base + header.e_phoff, segments, header.e_phnum * sizeof segments[0]) != 0) {
        image->memory.state = 0;
        return;
    }
    uint64_t first_load = UINT64_MAX, eh_vaddr = 0;
    int have_eh = 0;
    for (int i = 0; i < header.e_phnum; i++) {
        if (segments[i].p_type == PT_LOAD && segments[i].p_offset == 0) first_load = segments[i].p_vaddr;
        if (segments[i].p_type == PT_GNU_EH_FRAME) eh_vaddr = segments[i].p_vaddr, have_eh = 1;
    }
    if (!have_eh || first_load == UINT64_MAX) return;
    // Load bias: where the base is, minus where the first segment was linked (0 for PIE and shared objects).
    uint64_t hdr = image->base - (first_load & ~0xfffULL) + eh_vaddr;
    uint8_t bytes[4 + 8 + 8];
    if (read_target(as, arg, hdr, bytes, sizeof bytes) != 0) {
        image->memory.state = 0;
        return;
    }
    // Same layout and the same one table encoding libunwind can search as for the vDSO.
    if (bytes[0] != 1 || bytes[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4)) return;
    const uint8_t *p = bytes + 4, *end = bytes + sizeof bytes;
    uint64_t eh_frame_ptr, fde_count;
    if (read_encoded(&p, end, bytes[1], &eh_frame_ptr) != 0) return;
    if (read_encoded(&p, end, bytes[2], &fde_count) != 0 || fde_count == 0) return;
    // The count is the target's word: a table larger than the image holding it is damaged (or hostile).
    if (fde_count > (image->end - image->start) / 8) return;
    image->memory.eh_frame_hdr = hdr;
    image->memory.table = hdr + (uint64_t)(p - bytes);
    image->memory.fde_count = fde_count;
    image->memory.state = 1;
}

void sw_images_locate_tables(sw_images *images, unw_addr_space_t as, void *arg) {
    for (int i = 0; i < images->count; i++) {
        if (images->list[i].memory.state == 0) locate_memory_table(&images->list[i], as, arg);
    }
}

int sw_memory_find_proc_info(sw_image *image, unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
                             int need_unwind_info, void *arg) {
    if (image->memory.state == 0) locate_memory_table(image, as, arg);
    if (image->memory.state != 1) return -UNW_ENOINFO;
    unw_dyn_info_t di;
    memset(&di, 0, sizeof di);
    di.start_ip = image->start;
    di.end_ip = image->end;
    di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
    di.u.rti.segbase = image->memory.eh_frame_hdr;
    di.u.rti.table_data = image->memory.table;
    di.u.rti.table_len = image->memory.fde_count * 8 / sizeof(unw_word_t);
    return _Ux86_64_dwarf_search_unwind_table(as, ip, &di, pi, need_unwind_info, arg);
}

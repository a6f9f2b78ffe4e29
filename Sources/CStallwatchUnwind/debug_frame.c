// Unwinding through code whose rules are only in `.debug_frame` (built with -fno-asynchronous-unwind-tables).
//
// Why: Debian's libunwind 1.6.2 is built without its .debug_frame support on x86-64 (no dwarf_find_debug_frame),
// so such a frame has no rule and the walk stops there, quietly. eu-stack and gdb read .debug_frame. Here the
// image's section is read from the file the target maps (through /proc/PID/map_files, which names the mapped file
// even when it was replaced or lives in another mount namespace), its FDE for the frame found, and its call-frame
// program run: the caller's registers go back to libunwind, which carries on from there.
#include "sw_unwind_internal.h"

#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/// Reads the image's `.debug_frame` and its load bias; state -1 when there is none (or it is compressed).
static void load(sw_image *image, pid_t pid) {
    image->debug_frame.state = -1;
    if (image->base == 0) return;
    char path[96];
    snprintf(path, sizeof path, "/proc/%d/map_files/%llx-%llx", (int)pid, (unsigned long long)image->start,
             (unsigned long long)image->end);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat info;
    void *file = MAP_FAILED;
    if (fstat(fd, &info) == 0 && info.st_size >= (off_t)sizeof(Elf64_Ehdr))
        file = mmap(NULL, (size_t)info.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (file == MAP_FAILED) return;
    const uint8_t *bytes = file;
    size_t size = (size_t)info.st_size;
    const Elf64_Ehdr *header = file;
    if (memcmp(header->e_ident, ELFMAG, SELFMAG) != 0 || header->e_ident[EI_CLASS] != ELFCLASS64) goto done;
    if (header->e_shentsize != sizeof(Elf64_Shdr) || header->e_shoff == 0 || header->e_shstrndx >= header->e_shnum ||
        header->e_shoff + (uint64_t)header->e_shnum * sizeof(Elf64_Shdr) > size)
        goto done;
    if (header->e_phentsize != sizeof(Elf64_Phdr) ||
        header->e_phoff + (uint64_t)header->e_phnum * sizeof(Elf64_Phdr) > size)
        goto done;
    const Elf64_Phdr *segments = (const Elf64_Phdr *)(bytes + header->e_phoff);
    uint64_t first_load = UINT64_MAX;
    for (int i = 0; i < header->e_phnum; i++) {
        if (segments[i].p_type == PT_LOAD && segments[i].p_offset == 0) first_load = segments[i].p_vaddr;
    }
    if (first_load == UINT64_MAX) goto done;
    const Elf64_Shdr *sections = (const Elf64_Shdr *)(bytes + header->e_shoff);
    const Elf64_Shdr *names = &sections[header->e_shstrndx];
    for (int i = 0; i < header->e_shnum; i++) {
        const Elf64_Shdr *section = &sections[i];
        if (section->sh_name >= names->sh_size || names->sh_offset + names->sh_size > size) continue;
        if (strcmp((const char *)bytes + names->sh_offset + section->sh_name, ".debug_frame") != 0) continue;
        if ((section->sh_flags & SHF_COMPRESSED) || section->sh_type != SHT_PROGBITS) break;
        if (section->sh_offset + section->sh_size > size || section->sh_size == 0) break;
        image->debug_frame.data = malloc(section->sh_size);
        if (image->debug_frame.data == NULL) break;
        memcpy(image->debug_frame.data, bytes + section->sh_offset, section->sh_size);
        image->debug_frame.size = section->sh_size;
        image->debug_frame.bias = image->base - (first_load & ~0xfffULL);
        image->debug_frame.state = 1;
        break;
    }
done:
    munmap(file, size);
}

typedef struct {
    const uint8_t *p, *end;
    int bad;
} cursor;

static uint64_t u(cursor *c, int size) {
    if (c->bad || c->end - c->p < size) return c->bad = 1, 0;
    uint64_t value = 0;
    memcpy(&value, c->p, (size_t)size);  // little-endian
    c->p += size;
    return value;
}

static uint64_t uleb(cursor *c) {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (c->p >= c->end) return c->bad = 1, 0;
        uint8_t byte = *c->p++;
        value |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) return value;
    }
    return c->bad = 1, 0;
}

static int64_t sleb(cursor *c) {
    int64_t value = 0;
    int shift = 0;
    uint8_t byte;
    do {
        if (c->p >= c->end || shift >= 64) return c->bad = 1, 0;
        byte = *c->p++;
        value |= (int64_t)(byte & 0x7f) << shift;
        shift += 7;
    } while (byte & 0x80);
    if (shift < 64 && (byte & 0x40)) value |= -((int64_t)1 << shift);
    return value;
}

enum { REGS = 17, RA = 16, DEPTH = 8 };
enum { SAME = 0, OFFSET, VAL_OFFSET, REGISTER, UNSUPPORTED };

typedef struct {
    int how[REGS];
    int64_t value[REGS];
    uint64_t cfa_reg;
    int64_t cfa_offset;
    int cfa_bad;
} rules;

typedef struct {
    uint64_t code_align;
    int64_t data_align;
    int address_size;
    const uint8_t *instructions, *end;
} cie;

/// An entry's length and id at `offset`; 0 at the end or on damage.
static int entry(const sw_debug_frame *frame, uint64_t offset, uint64_t *body, uint64_t *end, uint64_t *id,
                 int *cie_entry) {
    cursor c = {frame->data + offset, frame->data + frame->size, 0};
    uint64_t length = u(&c, 4);
    int wide = length == 0xffffffffULL;
    if (wide) length = u(&c, 8);
    if (c.bad || length == 0 || length > (uint64_t)(c.end - c.p)) return 0;
    *end = (uint64_t)(c.p - frame->data) + length;
    *id = u(&c, wide ? 8 : 4);
    *cie_entry = *id == (wide ? ~0ULL : 0xffffffffULL);
    *body = (uint64_t)(c.p - frame->data);
    return !c.bad;
}

static int parse_cie(const sw_debug_frame *frame, uint64_t offset, cie *out) {
    uint64_t body, end, id;
    int is_cie;
    if (offset >= frame->size || !entry(frame, offset, &body, &end, &id, &is_cie) || !is_cie) return 0;
    cursor c = {frame->data + body, frame->data + end, 0};
    int version = (int)u(&c, 1);
    const char *augmentation = (const char *)c.p;
    while (c.p < c.end && *c.p) c.p++;
    c.p++;
    // Only plain CIEs: an augmentation would change how FDEs are laid out.
    if (c.p > c.end || augmentation[0] != 0 || version < 1 || version > 4) return 0;
    out->address_size = 8;
    if (version >= 4) {
        out->address_size = (int)u(&c, 1);
        if (u(&c, 1) != 0) return 0;  // segment selectors
    }
    out->code_align = uleb(&c);
    out->data_align = sleb(&c);
    if (version == 1)
        (void)u(&c, 1);
    else
        (void)uleb(&c);
    out->instructions = c.p;
    out->end = c.end;
    return !c.bad && (out->address_size == 8 || out->address_size == 4);
}

/// Runs a call-frame program up to `target`; 0 on an instruction it cannot follow.
static int run(rules *r, const rules *initial, const cie *info, const uint8_t *p, const uint8_t *end,
               uint64_t *location, uint64_t target) {
    cursor c = {p, end, 0};
    rules saved[DEPTH];
    int depth = 0;
    while (c.p < c.end && !c.bad) {
        uint8_t op = *c.p++;
        uint64_t reg, delta = 0;
        switch (op & 0xc0) {
        case 0x40: delta = (op & 0x3f) * info->code_align; goto advance;
        case 0x80:
            reg = op & 0x3f;
            if (reg < REGS)
                r->how[reg] = OFFSET, r->value[reg] = (int64_t)uleb(&c) * info->data_align;
            else
                (void)uleb(&c);
            continue;
        case 0xc0:
            reg = op & 0x3f;
            if (reg < REGS) r->how[reg] = initial->how[reg], r->value[reg] = initial->value[reg];
            continue;
        default: break;
        }
        switch (op) {
        case 0x00: continue;
        case 0x01: {
            uint64_t to = u(&c, info->address_size);
            if (to > target) return 1;
            *location = to;
            continue;
        }
        case 0x02: delta = u(&c, 1) * info->code_align; goto advance;
        case 0x03: delta = u(&c, 2) * info->code_align; goto advance;
        case 0x04: delta = u(&c, 4) * info->code_align; goto advance;
        case 0x05:
        case 0x11:
        case 0x14:
        case 0x15: {
            reg = uleb(&c);
            int64_t offset =
                op == 0x05 || op == 0x14 ? (int64_t)uleb(&c) * info->data_align : sleb(&c) * info->data_align;
            if (reg < REGS) r->how[reg] = op == 0x05 || op == 0x11 ? OFFSET : VAL_OFFSET, r->value[reg] = offset;
            continue;
        }
        case 0x06:
            reg = uleb(&c);
            if (reg < REGS) r->how[reg] = initial->how[reg], r->value[reg] = initial->value[reg];
            continue;
        case 0x07:
        case 0x08:
            reg = uleb(&c);
            if (reg < REGS) r->how[reg] = SAME;
            continue;
        case 0x09: {
            reg = uleb(&c);
            uint64_t other = uleb(&c);
            if (reg < REGS) r->how[reg] = REGISTER, r->value[reg] = (int64_t)other;
            continue;
        }
        case 0x0a:
            if (depth == DEPTH) return 0;
            saved[depth++] = *r;
            continue;
        case 0x0b: {
            if (depth == 0) return 0;
            uint64_t cfa_reg = r->cfa_reg;
            int64_t cfa_offset = r->cfa_offset;
            *r = saved[--depth];
            r->cfa_reg = cfa_reg, r->cfa_offset = cfa_offset;  // the CFA is not part of the remembered state
            continue;
        }
        case 0x0c:
            r->cfa_reg = uleb(&c);
            r->cfa_offset = (int64_t)uleb(&c);
            r->cfa_bad = 0;
            continue;
        case 0x0d: r->cfa_reg = uleb(&c); continue;
        case 0x0e: r->cfa_offset = (int64_t)uleb(&c); continue;
        case 0x12:
            r->cfa_reg = uleb(&c);
            r->cfa_offset = sleb(&c) * info->data_align;
            r->cfa_bad = 0;
            continue;
        case 0x13: r->cfa_offset = sleb(&c) * info->data_align; continue;
        case 0x0f:
            c.p += uleb(&c);
            r->cfa_bad = 1;
            continue;
        case 0x10:
        case 0x16:
            reg = uleb(&c);
            c.p += uleb(&c);
            if (reg < REGS) r->how[reg] = UNSUPPORTED;
            continue;
        case 0x2e: (void)uleb(&c); continue;
        case 0x2f:
            reg = uleb(&c);
            if (reg < REGS) r->how[reg] = OFFSET, r->value[reg] = -(int64_t)uleb(&c) * info->data_align;
            continue;
        default: return 0;
        }
    advance:
        if (*location + delta > target) return 1;
        *location += delta;
    }
    return !c.bad;
}

int sw_debug_frame_step(sw_image *image, pid_t pid, uint64_t pc, uint64_t values[17],
                        int (*read_word)(void *context, uint64_t address, uint64_t *value), void *context) {
    if (image->debug_frame.state == 0) load(image, pid);
    if (image->debug_frame.state != 1) return 0;
    const sw_debug_frame *frame = &image->debug_frame;
    uint64_t target = pc - frame->bias;
    for (uint64_t offset = 0, body, end, id; offset + 4 <= frame->size; offset = end) {
        int is_cie;
        if (!entry(frame, offset, &body, &end, &id, &is_cie)) return 0;
        if (is_cie) continue;
        cie info;
        if (!parse_cie(frame, id, &info)) continue;
        cursor c = {frame->data + body, frame->data + end, 0};
        uint64_t start = u(&c, info.address_size), range = u(&c, info.address_size);
        if (c.bad || target < start || target >= start + range) continue;
        rules initial, current;
        memset(&initial, 0, sizeof initial);
        uint64_t location = start;
        if (!run(&initial, &initial, &info, info.instructions, info.end, &location, UINT64_MAX)) return 0;
        current = initial;
        location = start;
        if (!run(&current, &initial, &info, c.p, c.end, &location, target)) return 0;
        if (current.cfa_bad || current.cfa_reg >= REGS || current.how[RA] != OFFSET) return 0;
        uint64_t cfa = values[current.cfa_reg] + (uint64_t)current.cfa_offset, caller[REGS];
        memcpy(caller, values, sizeof caller);
        for (int reg = 0; reg < REGS; reg++) {
            switch (current.how[reg]) {
            case OFFSET:
                if (read_word(context, cfa + (uint64_t)current.value[reg], &caller[reg]) != 0) return 0;
                break;
            case VAL_OFFSET: caller[reg] = cfa + (uint64_t)current.value[reg]; break;
            case REGISTER: caller[reg] = (uint64_t)current.value[reg] < REGS ? values[current.value[reg]] : 0; break;
            case UNSUPPORTED:
                if (reg == RA) return 0;
                break;
            default: break;
            }
        }
        caller[7] = cfa;  // the caller's stack pointer is the CFA
        // The stack only grows one way: a caller below its callee is a bad rule, not a frame.
        if (cfa <= values[7] || caller[RA] == 0) return 0;
        memcpy(values, caller, sizeof caller);
        return 1;
    }
    return 0;
}

void sw_debug_frame_clear(sw_image *image) {
    free(image->debug_frame.data);
    image->debug_frame.data = NULL;
    image->debug_frame.state = 0;
}

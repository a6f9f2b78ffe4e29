// Symbol-table naming with libelf. Only what libelf cannot do for us lives here: choosing the function symbol that
// covers an address, and finding the separate debug file by build ID.
#include "CStallwatchElf.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct image_file {
    int fd;
    Elf *elf;
};

struct sw_symbols {
    struct image_file image;
    struct image_file debug;  // fd < 0 when there is none
    uint64_t load_vaddr;      // virtual address of the image's first mapping (0 for PIE and shared objects)
    int has_debug_info;
};

static int open_image(const char *path, struct image_file *file) {
    file->fd = open(path, O_RDONLY | O_CLOEXEC);
    file->elf = NULL;
    if (file->fd < 0) return 0;
    file->elf = elf_begin(file->fd, ELF_C_READ_MMAP, NULL);
    if (file->elf == NULL || elf_kind(file->elf) != ELF_K_ELF) {
        if (file->elf) elf_end(file->elf);
        close(file->fd);
        file->fd = -1;
        file->elf = NULL;
        return 0;
    }
    return 1;
}

static void close_image(struct image_file *file) {
    if (file->elf) elf_end(file->elf);
    if (file->fd >= 0) close(file->fd);
    file->elf = NULL;
    file->fd = -1;
}

static Elf_Scn *section_named(Elf *elf, const char *wanted, GElf_Shdr *header) {
    size_t names;
    if (elf_getshdrstrndx(elf, &names) != 0) return NULL;
    for (Elf_Scn *section = elf_nextscn(elf, NULL); section; section = elf_nextscn(elf, section)) {
        if (gelf_getshdr(section, header) == NULL) continue;
        const char *name = elf_strptr(elf, names, header->sh_name);
        if (name && strcmp(name, wanted) == 0) return section;
    }
    return NULL;
}

/// The virtual address the first mapping of the file (file offset 0) is linked at.
static uint64_t first_load_vaddr(Elf *elf) {
    size_t count;
    if (elf_getphdrnum(elf, &count) != 0) return 0;
    for (size_t index = 0; index < count; index++) {
        GElf_Phdr header;
        if (gelf_getphdr(elf, (int)index, &header) && header.p_type == PT_LOAD) {
            return (header.p_vaddr - header.p_offset) & ~(uint64_t)0xfff;
        }
    }
    return 0;
}

/// /usr/lib/debug/.build-id/xx/yyyy.debug for the image's GNU build ID, if that file exists.
static int open_debug_file(Elf *elf, struct image_file *file) {
    file->fd = -1;
    file->elf = NULL;
    GElf_Shdr header;
    Elf_Scn *section = section_named(elf, ".note.gnu.build-id", &header);
    Elf_Data *data = section ? elf_getdata(section, NULL) : NULL;
    if (data == NULL) return 0;
    GElf_Nhdr note;
    size_t name_offset, desc_offset;
    for (size_t offset = 0; (offset = gelf_getnote(data, offset, &note, &name_offset, &desc_offset)) > 0;) {
        if (note.n_type != NT_GNU_BUILD_ID || note.n_descsz < 2 || note.n_descsz > 64) continue;
        const unsigned char *id = (const unsigned char *)data->d_buf + desc_offset;
        char path[64 + 2 * 64 + 16] = "/usr/lib/debug/.build-id/";
        size_t length = strlen(path);
        length += (size_t)snprintf(path + length, sizeof path - length, "%02x/", id[0]);
        for (size_t byte = 1; byte < note.n_descsz; byte++) {
            length += (size_t)snprintf(path + length, sizeof path - length, "%02x", id[byte]);
        }
        snprintf(path + length, sizeof path - length, ".debug");
        return open_image(path, file);
    }
    return 0;
}

sw_symbols *sw_symbols_open(const char *path) {
    elf_version(EV_CURRENT);
    sw_symbols *symbols = calloc(1, sizeof *symbols);
    if (symbols == NULL) return NULL;
    if (!open_image(path, &symbols->image)) {
        free(symbols);
        return NULL;
    }
    GElf_Shdr header;
    symbols->has_debug_info = section_named(symbols->image.elf, ".debug_info", &header) != NULL;
    symbols->load_vaddr = first_load_vaddr(symbols->image.elf);
    if (!open_debug_file(symbols->image.elf, &symbols->debug)) symbols->debug.fd = -1;
    return symbols;
}

void sw_symbols_close(sw_symbols *symbols) {
    if (symbols == NULL) return;
    close_image(&symbols->image);
    close_image(&symbols->debug);
    free(symbols);
}

int sw_symbols_has_debug_info(const sw_symbols *symbols) { return symbols->has_debug_info; }

uint64_t sw_symbols_link_base(const sw_symbols *symbols) { return symbols->load_vaddr; }

/// How much a name is preferred among aliases of one function: exported names (global or weak, first one listed)
/// over local ones, and anything over glibc's internal `__GI_` aliases.
static int alias_rank(unsigned char info, const char *name) {
    int rank = GELF_ST_BIND(info) == STB_LOCAL ? 1 : 2;
    return strncmp(name, "__GI_", 5) == 0 ? rank - 1 : rank;
}

/// One pass over a file's symbol table (`.symtab`, else `.dynsym`): for each address, the function whose
/// [value, value + size) holds it; the innermost (latest-starting) one where ranges nest, the global one among
/// aliases.
static void name_from(Elf *elf, const uint64_t *vaddrs, size_t count, const char **names, uint64_t *starts) {
    int *ranks = calloc(count ? count : 1, sizeof *ranks);
    if (ranks == NULL) return;
    Elf_Scn *table = NULL;
    GElf_Shdr header;
    for (int pass = 0; pass < 2 && table == NULL; pass++) {
        Elf32_Word wanted = pass == 0 ? SHT_SYMTAB : SHT_DYNSYM;
        for (Elf_Scn *section = elf_nextscn(elf, NULL); section; section = elf_nextscn(elf, section)) {
            if (gelf_getshdr(section, &header) && header.sh_type == wanted) {
                table = section;
                break;
            }
        }
    }
    Elf_Data *data = table ? elf_getdata(table, NULL) : NULL;
    if (data == NULL || header.sh_entsize == 0) {
        free(ranks);
        return;
    }
    size_t symbol_count = header.sh_size / header.sh_entsize;
    for (size_t index = 0; index < symbol_count; index++) {
        GElf_Sym symbol;
        if (gelf_getsym(data, (int)index, &symbol) == NULL) continue;
        int type = GELF_ST_TYPE(symbol.st_info);
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) || symbol.st_size == 0 || symbol.st_shndx == SHN_UNDEF) {
            continue;
        }
        for (size_t slot = 0; slot < count; slot++) {
            uint64_t vaddr = vaddrs[slot];
            if (vaddr < symbol.st_value || vaddr - symbol.st_value >= symbol.st_size) continue;
            if (names[slot] != NULL && starts[slot] > symbol.st_value) continue;
            const char *name = elf_strptr(elf, header.sh_link, symbol.st_name);
            if (name == NULL || name[0] == '\0') continue;
            int rank = alias_rank(symbol.st_info, name);
            if (names[slot] != NULL && starts[slot] == symbol.st_value && ranks[slot] >= rank) continue;
            names[slot] = name;
            starts[slot] = symbol.st_value;
            ranks[slot] = rank;
        }
    }
    free(ranks);
}

const void *sw_symbols_section(sw_symbols *symbols, const char *name, size_t *size) {
    *size = 0;
    GElf_Shdr header;
    Elf_Scn *section = section_named(symbols->image.elf, name, &header);
    if (section == NULL || header.sh_type == SHT_NOBITS) return NULL;
    // Compressed debug sections (SHF_COMPRESSED, as `ld --compress-debug-sections` writes) are inflated in memory.
    if ((header.sh_flags & SHF_COMPRESSED) != 0 && elf_compress(section, 0, 0) < 0) return NULL;
    Elf_Data *data = elf_getdata(section, NULL);
    if (data == NULL || data->d_buf == NULL) return NULL;
    *size = data->d_size;
    return data->d_buf;
}

void sw_symbols_name(sw_symbols *symbols, const uint64_t *offsets, size_t count, const char **names) {
    for (size_t slot = 0; slot < count; slot++) names[slot] = NULL;
    uint64_t *vaddrs = calloc(count ? count : 1, sizeof *vaddrs);
    uint64_t *starts = calloc(count ? count : 1, sizeof *starts);
    if (vaddrs == NULL || starts == NULL) {
        free(vaddrs);
        free(starts);
        return;
    }
    for (size_t slot = 0; slot < count; slot++) {
        vaddrs[slot] = offsets[slot] + symbols->load_vaddr;
        names[slot] = NULL;
    }
    name_from(symbols->image.elf, vaddrs, count, names, starts);
    // The debug file's table has the local functions the image's own (stripped) table lacks.
    if (symbols->debug.elf) {
        const char **more = calloc(count ? count : 1, sizeof *more);
        uint64_t *more_starts = calloc(count ? count : 1, sizeof *more_starts);
        if (more && more_starts) {
            name_from(symbols->debug.elf, vaddrs, count, more, more_starts);
            for (size_t slot = 0; slot < count; slot++) {
                if (more[slot] && (names[slot] == NULL || more_starts[slot] > starts[slot])) names[slot] = more[slot];
            }
        }
        free(more);
        free(more_starts);
    }
    free(vaddrs);
    free(starts);
}

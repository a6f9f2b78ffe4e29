// Function names from an ELF image's symbol table, read with elfutils' libelf: the cheap half of symbolication.
#ifndef CSTALLWATCH_ELF_H
#define CSTALLWATCH_ELF_H

#include <stddef.h>
#include <stdint.h>

/// One image's symbol tables: its own `.symtab` (or `.dynsym` when stripped) and, when installed, the `.symtab` of
/// its separate debug file (found by build ID under /usr/lib/debug), which adds the local functions.
typedef struct sw_symbols sw_symbols;

/// Opens `path`; NULL if it is not a readable ELF file.
sw_symbols *_Nullable sw_symbols_open(const char *_Nonnull path);
void sw_symbols_close(sw_symbols *_Nullable symbols);

/// Whether the file itself carries DWARF (`.debug_info`): then a DWARF reader should name its frames.
int sw_symbols_has_debug_info(const sw_symbols *_Nonnull symbols);

/// The virtual address the image's first mapping is linked at: 0 for PIE executables and shared objects, the link
/// address (e.g. 0x400000) for others. An offset from the load base plus this is the address in the file.
uint64_t sw_symbols_link_base(const sw_symbols *_Nonnull symbols);

/// The bytes of the image's section `name` (inflated if compressed), or NULL if it has none; they live until
/// `sw_symbols_close`.
const void *_Nullable sw_symbols_section(sw_symbols *_Nonnull symbols, const char *_Nonnull name,
                                         size_t *_Nonnull size);

/// Names `count` offsets from the image's load base (the start of its first mapping).
///
/// For each, `names[i]` is the raw (mangled) name of the function symbol whose range contains it, or NULL; the
/// strings live until `sw_symbols_close`. One pass over each table for all offsets.
void sw_symbols_name(sw_symbols *_Nonnull symbols, const uint64_t *_Nonnull offsets, size_t count,
                     const char *_Nullable *_Nonnull names);

#endif

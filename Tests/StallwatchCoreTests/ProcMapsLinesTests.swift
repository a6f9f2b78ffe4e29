// Picking lines out of /proc/PID/maps text by their ending.
import StallwatchCore
import Testing

@Suite struct ProcMapsLinesTests {
    let maps = Array(
        """
        55d0c0a00000-55d0c0a08000 r--p 00000000 fd:01 1234   /usr/bin/app
        7f0000001000-7f0000002000 r-xp 00001000 fd:01 99     /usr/lib/libold.so (deleted)
        7ffd5a1f4000-7ffd5a1f6000 r-xp 00000000 00:00 0      [vdso]
        7ffd5a1f6000-7ffd5a1f8000 r--p 00000000 00:00 0      [vvar]
        7f0000003000-7f0000004000 r-xp 00001000 fd:01 98     /usr/lib/libgone.so (deleted)
        """.utf8)

    @Test func findsTheLinesWithAnEnding() {
        #expect(
            ProcMapsLines.ending(with: "[vdso]", in: maps) == [
                "7ffd5a1f4000-7ffd5a1f6000 r-xp 00000000 00:00 0      [vdso]"
            ])
        let deleted = ProcMapsLines.ending(with: " (deleted)", in: maps)
        #expect(deleted.count == 2 && deleted[0].contains("libold.so") && deleted[1].contains("libgone.so"))
        #expect(ProcMapsLines.ending(with: "[heap]", in: maps).isEmpty)
        #expect(ProcMapsLines.ending(with: "[vdso]", in: []).isEmpty)
    }

    @Test func readsALinesRange() {
        #expect(
            ProcMapsLines.range(of: "7ffd5a1f4000-7ffd5a1f6000 r-xp 00000000 00:00 0 [vdso]")
                == 0x7ffd_5a1f_4000..<0x7ffd_5a1f_6000)
        #expect(ProcMapsLines.range(of: "garbage") == nil)
        #expect(ProcMapsLines.range(of: "2000-1000 r-xp") == nil)
    }

    @Test func findsExecutableFileMappingsWithTheirLoadBase() {
        let text = Array(
            """
            00400000-00401000 r--p 00000000 fd:01 7      /opt/app/nopie
            00401000-00402000 r-xp 00001000 fd:01 7      /opt/app/nopie
            7f0000000000-7f0000028000 r--p 00000000 fd:01 9      /usr/lib/x86_64-linux-gnu/libc.so.6
            7f0000028000-7f000019d000 r-xp 00028000 fd:01 9      /usr/lib/x86_64-linux-gnu/libc.so.6
            7f00001f5000-7f00001f6000 rw-p 00000000 00:00 0
            7ffd5a1f4000-7ffd5a1f6000 r-xp 00000000 00:00 0      [vdso]
            """.utf8)
        #expect(
            ProcMapsLines.executableFiles(in: text) == [
                MappedCode(path: "/opt/app/nopie", start: 0x40_1000, end: 0x40_2000, base: 0x40_0000),
                MappedCode(
                    path: "/usr/lib/x86_64-linux-gnu/libc.so.6", start: 0x7f00_0002_8000, end: 0x7f00_0019_d000,
                    base: 0x7f00_0000_0000),
            ])
    }

    /// The same file mapped whole by a reader (libelf opening libc.so.6, say) lower in memory, or twice loaded: each
    /// code mapping's base is its own image's header, just below it, not the lowest mapping of that path.
    @Test func aFileMappedAgainElsewhereDoesNotMoveTheBase() {
        let text = Array(
            """
            7e0000000000-7e00001d6000 r--s 00000000 fd:01 9      /usr/lib/x86_64-linux-gnu/libc.so.6
            7f0000000000-7f0000028000 r--p 00000000 fd:01 9      /usr/lib/x86_64-linux-gnu/libc.so.6
            7f0000028000-7f000019d000 r-xp 00028000 fd:01 9      /usr/lib/x86_64-linux-gnu/libc.so.6
            7f1000000000-7f1000028000 r--p 00000000 fd:01 9      /usr/lib/x86_64-linux-gnu/libc.so.6
            7f1000028000-7f100019d000 r-xp 00028000 fd:01 9      /usr/lib/x86_64-linux-gnu/libc.so.6
            """.utf8)
        #expect(ProcMapsLines.executableFiles(in: text).map(\.base) == [0x7f00_0000_0000, 0x7f10_0000_0000])
    }
}

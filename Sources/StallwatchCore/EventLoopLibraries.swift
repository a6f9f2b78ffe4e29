// Whether a program can run an event loop the agent watches, from the shared libraries it needs.

/// The libraries that provide what the agent watches: CoreFoundation's run loop (inside `libFoundation.so` on
/// Linux) and libdispatch's main queue (`dispatchMain()`, which Foundation needs too).
///
/// A program that needs neither — a C tool, a shell, a wrapper such as `env` or `setpriv` on the way to the real
/// program — has nothing for the agent to watch, and the agent starts no thread in it: a thread of its own is not
/// free there (glibc runs every set-id call on every thread, and `setpriv --reuid` aborts when that fails on one).
public enum EventLoopLibraries {
    /// File-name prefixes: a library's file name is its soname, possibly with a longer version.
    static let providers = ["libdispatch.so", "libFoundation.so"]

    /// Whether any of `libraries` (file names, as the program's dynamic section names them) provides an event loop.
    public static func mayRunEventLoop(needing libraries: some Sequence<String>) -> Bool {
        libraries.contains { library in providers.contains { library.hasPrefix($0) } }
    }

    /// Splits what `sw_agent_program_libraries` wrote: NUL-separated names.
    public static func names(in bytes: some Collection<UInt8>) -> [String] {
        bytes.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    }
}

// Tells the program's own code from the system's, so reports can point at the culprit.

/// Classifies images and frames as the program's own or the system's.
public enum ImageClassifier {
    /// File-name prefixes of libraries that are never the culprit: the C library and loader, the Swift
    /// runtime and its overlays, Foundation, CoreFoundation, libdispatch, the C++ runtime, libunwind.
    static let systemPrefixes = [
        "libc.so", "libc-", "ld-linux", "libpthread", "libm.so", "libdl.so", "librt.so", "libgcc_s",
        "libstdc++", "libswift", "libFoundation", "lib_Foundation", "libCoreFoundation", "libdispatch",
        "libBlocksRuntime", "libunwind", "libStallwatchAgent", "linux-vdso", "[vdso]", "libicu", "libxml2",
    ]

    /// Whether an image (path or name) belongs to the system rather than the program.
    public static func isSystemImage(_ image: String) -> Bool {
        let name = image.split(separator: "/").last.map(String.init) ?? image
        return systemPrefixes.contains { name.hasPrefix($0) }
    }

    /// Whether a frame is in the program's own code: a named function in a non-system image, and not a
    /// compiler-generated thunk.
    public static func isApplicationFrame(_ frame: Frame) -> Bool {
        guard let image = frame.image, !isSystemImage(image), let symbol = frame.symbol else { return false }
        if symbol.hasPrefix("thunk for ") || symbol.hasPrefix("reabstraction thunk") { return false }
        if symbol == "main" || symbol == "_start" || symbol.hasPrefix("__libc") { return false }
        // `$main` and the `static T.$main()` entry are program frames, but only the outermost ones.
        return !symbol.hasSuffix(".$main()") && symbol != "$main"
    }
}

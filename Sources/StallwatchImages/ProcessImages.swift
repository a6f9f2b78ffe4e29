// A snapshot of which ELF images a process has loaded where, taken while the process is alive.
import FoundationEssentials
import Glibc
@_spi(Internal) @_spi(MemoryReaders) import Runtime
import StallwatchCore

/// The images (executable, shared libraries, vDSO) mapped into one process at one moment.
///
/// Take it right after capturing a stack: symbolication happens later, possibly after the process exited.
/// Built from the process's `/proc/PID/maps` lines and its vDSO's range. In the process itself (the agent) it also
/// holds the toolchain's `Runtime.ImageMap`, for the in-process symbolicator; the collector never reads one of
/// another process: the `Runtime` module reads the target's memory and files with code that can trap on hostile
/// input (a damaged `.debug_abbrev` did), and stallwatch must not die of what it watches.
public struct ProcessImages: @unchecked Sendable {
    private let toolchainMap: FirstUse<ImageMap>?
    /// The toolchain's map, for its symbolicator; nil in the collector's snapshots of other processes.
    var map: ImageMap? { toolchainMap?.value }
    /// Whether the toolchain's map was made (it is made at its first use).
    var hasMadeToolchainMap: Bool { toolchainMap?.isMade ?? false }
    /// Where the process's vDSO is mapped.
    public let vdso: Range<UInt64>?
    /// Every file's executable mapping, from the maps lines: the first place an address's image is looked up (the
    /// toolchain's map also finds no non-PIE executable, e.g. a C program linked at 0x400000).
    let code: [MappedCode]
    /// Where the process's files are seen from here: `/proc/PID/root` when it runs in another mount namespace (a
    /// container), whose paths name other files, or none at all, in ours; nil when its paths are ours.
    public var fileRoot: String?
    /// A program file deleted or replaced on disk since the process started (its maps say `PATH (deleted)`), and
    /// where the running copy can still be read: `/proc/PID/exe`.
    var runningExecutable: (mapped: String, readable: String)?

    init(
        map: FirstUse<ImageMap>?, vdso: Range<UInt64>?, code: [MappedCode], fileRoot: String? = nil,
        runningExecutable: (mapped: String, readable: String)? = nil
    ) {
        self.toolchainMap = map
        self.vdso = vdso
        self.code = code
        self.fileRoot = fileRoot
        self.runningExecutable = runningExecutable
    }

    /// The images of another process, from its maps: what the collector names frames with.
    public static func capture(pid: Int32) -> ProcessImages {
        let maps = mapsBytes(of: "\(pid)")
        return ProcessImages(
            map: nil, vdso: vdsoRange(in: maps), code: ProcMapsLines.executableFiles(in: maps),
            fileRoot: fileRoot(of: pid), runningExecutable: replacedExecutable(of: pid))
    }

    /// The images of another process with the toolchain's image map too, for tests that compare the toolchain's
    /// symbolicator with the collector's. Reading its memory needs the same permission as ptrace.
    public static func captureWithToolchainMap(pid: Int32) -> ProcessImages {
        var images = capture(pid: pid)
        images = ProcessImages(
            map: FirstUse(ready: ImageMap.capture(using: RemoteMemoryReader(pid: pid as Any), forProcess: Int(pid))),
            vdso: images.vdso, code: images.code, fileRoot: images.fileRoot,
            runningExecutable: images.runningExecutable)
        return images
    }

    /// The process's program file if it was deleted or replaced since it started, with `/proc/PID/exe`, through
    /// which the kernel still serves the file the process runs.
    public static func replacedExecutable(of pid: Int32) -> (mapped: String, readable: String)? {
        guard let target = symbolicLink("/proc/\(pid)/exe"), target.hasSuffix(" (deleted)") else { return nil }
        return (target, "/proc/\(pid)/exe")
    }

    /// `/proc/PID/root` if the process sees another file system than this one (its mount namespace differs).
    public static func fileRoot(of pid: Int32) -> String? {
        let theirs = symbolicLink("/proc/\(pid)/ns/mnt")
        guard let theirs, theirs != symbolicLink("/proc/self/ns/mnt") else { return nil }
        return "/proc/\(pid)/root"
    }

    /// The path to open for an image path of the process: the running copy of a replaced program; through its root
    /// when it has its own file system and the file is there (it goes when the process exits); else the path.
    public func readablePath(_ path: String) -> String {
        // A rebuilt or upgraded program: name its frames from the file it is running, not the new one.
        if let runningExecutable, path == runningExecutable.mapped { return runningExecutable.readable }
        guard let fileRoot, path.hasPrefix("/") else { return path }
        let rooted = fileRoot + path
        return access(rooted, R_OK) == 0 ? rooted : path
    }

    private static func symbolicLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The images of the calling process (used by the agent, which then sends them to the collector).
    ///
    /// The toolchain's map is made only if something asks for it (the in-process symbolicator, an address outside
    /// every mapping the maps lines name): it reads each mapped file's ELF header straight from memory, so a mapping
    /// that goes between its reading of the maps and of the header faults. The agent sends only the maps' side, and
    /// must not fault in a program that maps and unmaps its own files.
    public static func captureCurrentProcess() -> ProcessImages {
        let maps = mapsBytes(of: "self")
        return ProcessImages(
            map: FirstUse { ImageMap.capture() }, vdso: vdsoRange(in: maps),
            code: ProcMapsLines.executableFiles(in: maps))
    }

    /// `/proc/PROCESS/maps`, empty if it cannot be read.
    static func mapsBytes(of process: String) -> [UInt8] {
        FileBytes.read("/proc/\(process)/maps") ?? []
    }

    /// The `[vdso]` line's range.
    static func vdsoRange(in maps: [UInt8]) -> Range<UInt64>? {
        ProcMapsLines.ending(with: "[vdso]", in: maps).first.flatMap(ProcMapsLines.range(of:))
    }

    /// What the agent sends of its snapshot: the maps' executable mappings and the vDSO, no toolchain map.
    private struct Encoding: Codable {
        var vdsoStart: UInt64?
        var vdsoEnd: UInt64?
        var code: [MappedCode]
    }

    /// A portable encoding, to carry the snapshot from the agent to the collector.
    public func encoded() -> [UInt8] {
        let encoding = Encoding(vdsoStart: vdso?.lowerBound, vdsoEnd: vdso?.upperBound, code: code)
        return (try? JSONEncoder().encode(encoding)).map { [UInt8]($0) } ?? []
    }

    /// Decodes ``encoded()``; `nil` if the bytes are not an image snapshot.
    public init?(encoded bytes: [UInt8]) {
        guard let encoding = try? JSONDecoder().decode(Encoding.self, from: Data(bytes)) else { return nil }
        toolchainMap = nil
        code = encoding.code
        if let start = encoding.vdsoStart, let end = encoding.vdsoEnd, start < end {
            vdso = start..<end
        } else {
            vdso = nil
        }
    }

    /// The path (or name) of the image that contains `address`, and the address's offset from its base.
    public func image(containing address: UInt64) -> (path: String, offset: UInt64)? {
        if let vdso, vdso.contains(address) { return ("[vdso]", address - vdso.lowerBound) }
        // The maps' own lines first: they are read already, and name every file (the toolchain's map has no non-PIE
        // executable).
        if let mapped = code.first(where: { $0.start <= address && address < $0.end }) {
            // A base above the mapping (a hostile or damaged snapshot from an agent) counts from the mapping.
            return (mapped.path, address - (mapped.base <= address ? mapped.base : mapped.start))
        }
        if let map, let index = map.indexOfImage(at: Backtrace.Address(address)) {
            let image = map[index]
            let base = UInt64(image.baseAddress) ?? 0
            return (image.path ?? image.name ?? "?", address >= base ? address - base : 0)
        }
        return nil
    }
}

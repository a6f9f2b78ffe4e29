// Which threads of a process to watch (`--thread`): the main one, every event loop, threads by name, or one by tid.
import Glibc

/// One `--thread` value.
///
/// A process's threads are told apart by their tid and their name (`/proc/PID/task/TID/comm`, at most 15 bytes,
/// as `pthread_setname_np` or `Thread.name` set it: SwiftNIO names its loops `NIO-ELT-0-#0`, `NIO-ELT-0-#1`, …).
public enum ThreadSelector: Hashable, Sendable, CustomStringConvertible {
    /// The main thread (whose tid is the pid): the default.
    case main
    /// Every thread that runs an event loop.
    case all
    /// Threads whose name matches a shell glob (`*`, `?`, `[...]`).
    case name(String)
    /// The thread with this tid.
    case tid(Int32)

    /// Why a `--thread` value is not a selector.
    public struct Invalid: Error, Equatable, Sendable {
        public var reason: String
    }

    /// Parses a `--thread` value: `main`, `all`, a tid (digits), or else a name glob.
    public init(parsing text: String) throws(Invalid) {
        if text.isEmpty {
            throw Invalid(reason: "a thread selector is 'main', 'all', a name glob or a tid, not empty")
        }
        switch text {
        case "main": self = .main
        case "all": self = .all
        default:
            if text.allSatisfy(\.isASCIIDigit) {
                guard let tid = Int32(text), tid > 0 else { throw Invalid(reason: "'\(text)' is not a thread id") }
                self = .tid(tid)
            } else {
                // comm holds at most 15 bytes: a longer pattern without a wildcard could never match.
                if text.utf8.count > 15, !text.contains(where: { "*?[".contains($0) }) {
                    throw Invalid(
                        reason: "'\(text)' is longer than a thread name can be (15 bytes); end it with '*'")
                }
                self = .name(text)
            }
        }
    }

    /// Whether this selector picks the thread `tid` of process `pid`, named `name`.
    ///
    /// `all` picks every thread; whether a thread runs an event loop is decided by watching it, not here.
    public func matches(tid: Int32, name: String?, pid: Int32) -> Bool {
        switch self {
        case .main: tid == pid
        case .all: true
        case .tid(let wanted): tid == wanted
        case .name(let pattern): name.map { Self.glob(pattern, matches: $0) } ?? false
        }
    }

    /// Shell glob matching, as the shell matches file names (fnmatch without flags: `*` also matches `/`).
    public static func glob(_ pattern: String, matches name: String) -> Bool {
        fnmatch(pattern, name, 0) == 0
    }

    /// The value as the user wrote it.
    public var description: String {
        switch self {
        case .main: "main"
        case .all: "all"
        case .name(let pattern): pattern
        case .tid(let tid): String(tid)
        }
    }
}

extension [ThreadSelector] {
    /// Whether any selector picks the thread.
    public func matches(tid: Int32, name: String?, pid: Int32) -> Bool {
        contains { $0.matches(tid: tid, name: name, pid: pid) }
    }

    /// Whether only the main thread is selected: stallwatch's behaviour before `--thread`.
    public var isMainOnly: Bool { allSatisfy { $0 == .main } }

    /// The selectors as one environment value (one per line: a glob may hold any other character).
    public var encoded: String { map(\.description).joined(separator: "\n") }

    /// Selectors from ``encoded``; those that do not parse are left out, and none at all means `main`.
    public init(encoded: String) {
        let parsed = encoded.split(separator: "\n").compactMap { try? ThreadSelector(parsing: String($0)) }
        self = parsed.isEmpty ? [.main] : parsed
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

/// A thread's role: its name with every number in it normalised, so the loops of one pool share a role.
///
/// Each run of digits becomes one `#`: `NIO-ELT-0-#3` and `NIO-ELT-0-#1` both have the role `NIO-ELT-#-##`, so
/// the same slow handler on two loop threads groups under one fingerprint.
public enum ThreadRole {
    public static func of(name: String) -> String {
        var role = ""
        var inDigits = false
        for character in name {
            if character.isASCII, character.isNumber {
                if !inDigits { role.append("#") }
                inDigits = true
            } else {
                role.append(character)
                inDigits = false
            }
        }
        return role
    }
}

/// The names of the agent's own threads, which `--thread all` leaves out: they run stallwatch, not the program.
public enum AgentThreadNames {
    /// The watcher thread (semaphore waits).
    public static let watcher = "stallwatch"
    /// The thread that listens for `stallwatch attach` (a `poll` loop of its own).
    public static let listener = "stallwatch-listen"
    /// The thread that serves `STALLWATCH_METRICS` in library mode (a `poll` loop of its own).
    public static let metrics = "stallwatch-http"
    public static let all: Set<String> = [watcher, listener, metrics]
}

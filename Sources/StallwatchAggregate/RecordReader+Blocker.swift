// A stall's `blocker` read back for `stallwatch report`: what it waited for, in one line, and the thread at the end of
// its chain of lock holders (the one the time went to) with that thread's stack.
import StallwatchCore

extension RecordReader {
    /// Holders nested deeper than this are skipped: stallwatch writes at most a handful, and a hostile file must not
    /// recurse the reader off its stack.
    static let deepestHolder = 16

    /// The `blocker` object that comes next; nil for `null`.
    static func readBlocker(
        _ scanner: inout JSONScanner, interning interner: inout FrameInterner
    ) throws(JSONScanError) -> StallCollection.Blocker? {
        guard try !scanner.readNull() else { return nil }
        var blocker = StallCollection.Blocker(kind: "unknown", summary: "")
        try readBlockerObject(&scanner, into: &blocker, depth: 0, interning: &interner)
        return blocker
    }

    /// Reads one blocker level: its own keys at depth 0, its holder (and the holder's own blocker, which replaces
    /// the root holder when it names a further one) below.
    private static func readBlockerObject(
        _ scanner: inout JSONScanner, into blocker: inout StallCollection.Blocker, depth: Int,
        interning interner: inout FrameInterner
    ) throws(JSONScanError) {
        try scanner.readObject { (scanner, key) throws(JSONScanError) in
            switch key {
            case "kind" where depth == 0: blocker.kind = try scanner.readOptionalString() ?? "unknown"
            case "summary" where depth == 0: blocker.summary = try scanner.readOptionalString() ?? ""
            case "lockKind" where depth == 0: blocker.lockKind = try scanner.readOptionalString()
            case "children" where depth == 0: blocker.childCommand = try readFirstCommand(&scanner)
            case "peers" where depth == 0: blocker.childCommand = try readFirstCommand(&scanner)
            case "object" where depth == 0: blocker.descriptorObject = try scanner.readOptionalString()
            case "holder":
                guard try !scanner.readNull() else { return }
                guard depth < deepestHolder else {
                    try scanner.skipValue()
                    return
                }
                try readHolder(&scanner, into: &blocker, depth: depth, interning: &interner)
            default: try scanner.skipValue()
            }
        }
    }

    private static func readHolder(
        _ scanner: inout JSONScanner, into blocker: inout StallCollection.Blocker, depth: Int,
        interning interner: inout FrameInterner
    ) throws(JSONScanError) {
        var tid: Int?
        var name: String?
        var closesCycle = false
        var stack: Int32?
        var nested: StallCollection.Blocker?
        try scanner.readObject { (scanner, key) throws(JSONScanError) in
            switch key {
            case "tid": tid = try scanner.readOptionalInteger()
            case "threadName": name = try scanner.readOptionalString()
            case "closesCycle": closesCycle = try scanner.readNull() ? false : try scanner.readBool()
            case "frames":
                guard try !scanner.readNull() else { return }
                stack = try interner.internStack(&scanner)
            case "blocker":
                guard try !scanner.readNull() else { return }
                var next = StallCollection.Blocker(kind: "lock", summary: "")
                try readBlockerObject(&scanner, into: &next, depth: depth + 1, interning: &interner)
                nested = next
            default: try scanner.skipValue()
            }
        }
        if closesCycle {
            blocker.deadlock = true
            return
        }
        blocker.holderTid = tid
        blocker.holderName = name
        blocker.holderStack = stack
        // The holder waits on a further holder: the chain's end is where the time went.
        if let nested {
            if nested.deadlock { blocker.deadlock = true }
            if nested.holderTid != nil {
                blocker.holderTid = nested.holderTid
                blocker.holderName = nested.holderName
                blocker.holderStack = nested.holderStack
            }
        }
    }

    /// The command line (or name) of a child wait's first child, or of a descriptor wait's first peer.
    private static func readFirstCommand(_ scanner: inout JSONScanner) throws(JSONScanError) -> String? {
        guard try !scanner.readNull() else { return nil }
        var command: String?
        try scanner.readArray { (scanner) throws(JSONScanError) in
            var line: String?
            var process: String?
            try scanner.readObject { (scanner, key) throws(JSONScanError) in
                switch key {
                case "commandLine": line = try scanner.readOptionalString()
                case "process": process = try scanner.readOptionalString()
                default: try scanner.skipValue()
                }
            }
            if command == nil { command = line ?? process }
        }
        return command
    }

    /// A `deadlock` record's own keys.
    static func readDeadlock(_ line: UnsafeBufferPointer<UInt8>) throws(JSONScanError) -> StallCollection.Deadlock {
        var scanner = JSONScanner(line)
        var deadlock = StallCollection.Deadlock(run: 0, pid: 0, process: "", summary: "", threads: 0)
        try scanner.readObject { (scanner, key) throws(JSONScanError) in
            switch key {
            case "pid": deadlock.pid = try scanner.readOptionalInteger() ?? 0
            case "process": deadlock.process = try scanner.readOptionalString() ?? ""
            case "summary": deadlock.summary = try scanner.readOptionalString() ?? ""
            case "threads":
                guard try !scanner.readNull() else { return }
                try scanner.readArray { (scanner) throws(JSONScanError) in
                    try scanner.skipValue()
                    deadlock.threads += 1
                }
            default: try scanner.skipValue()
            }
        }
        return deadlock
    }

    static let deadlockKeys: Set<String> = [
        "event", "schemaVersion", "host", "pid", "process", "detectedAt", "detectedMonotonicMs", "stallId", "summary",
        "threads",
    ]
}

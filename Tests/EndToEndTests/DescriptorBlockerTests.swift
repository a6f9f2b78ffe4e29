// Who is at the other end: a stalled loop reading a pipe names the child holding its write end (pid, command, the end
// it holds, what it does); one waiting on a slow local TCP server names both addresses and the server's process; a
// Unix socketpair its peer through sock_diag; a FIFO its path and writer. The text report, the JUnit message and
// `stallwatch report` say the same.
import Foundation
import StallwatchCore
import StallwatchTestSupport
import Testing

/// Tests/Fixtures/Programs/descriptor_waits.c, built once, and what it says about itself on stderr.
enum DescriptorWaits {
    static let built: Result<String, Error> = Result {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/Programs/descriptor_waits.c")
        let text = try String(contentsOf: source, encoding: .utf8)
        return try compile(text, language: "c", output: "descriptor_waits", extraArguments: ["-O1", "-g"])
            .appendingPathComponent("descriptor_waits").path
    }

    /// The `key=value` fields of the fixture's line that starts `descriptors: WHAT `.
    static func truth(_ what: String, in stderr: String) -> [String: String] {
        stderr.split(separator: "\n").first { $0.hasPrefix("descriptors: \(what) ") }.map { DemoStall.fields(of: $0) }
            ?? [:]
    }
}

// Serialized: the stalls are timed, and the machine has two cores.
@Suite(.serialized) struct DescriptorBlockerTests {
    func onlyBlocker(_ result: RunResult, in function: String) throws -> BlockerRecord {
        let stalls = try result.stalls
        try #require(stalls.count == 1, "\(result.stdout)\n\(result.stderr)")
        #expect(stalls[0].symbols.contains(function), "\(stalls[0].symbols.prefix(6))")
        return try #require(stalls[0].blocker.value, "\(result.stdout)")
    }

    @Test func aPipeToAQuietChildNamesTheChildHoldingTheWriteEnd() throws {
        let junit = FileManager.default.temporaryDirectory.appendingPathComponent("pipe-\(UUID()).xml").path
        let records = FileManager.default.temporaryDirectory.appendingPathComponent("pipe-\(UUID()).ndjson").path
        defer {
            try? FileManager.default.removeItem(atPath: junit)
            try? FileManager.default.removeItem(atPath: records)
        }
        let result = try runStallwatch(
            [
                "run", "--format", "json", "--fail-on-stall", "--junit", junit, "--", try DescriptorWaits.built.get(),
                "pipe",
            ])
        #expect(result.status == ExitCode.budgetBroken, "\(result.stderr)")
        let pipe = DescriptorWaits.truth("pipe", in: result.stderr)
        let child = try #require(Int(DescriptorWaits.truth("peer", in: result.stderr)["pid"] ?? ""))
        let blocker = try onlyBlocker(result, in: "read_from_peer")
        #expect(blocker.kind == "descriptor" && blocker.call == "read" && blocker.object == "pipe")
        #expect(blocker.fd == Int(pipe["fd"] ?? ""))
        #expect(blocker.inode?.value == Int(pipe["inode"] ?? ""))
        #expect(blocker.target?.value == "pipe:[\(pipe["inode"] ?? "")]")
        let peers = try #require(blocker.peers)
        #expect(peers.map(\.pid) == [child], "only the child holds the other end: \(blocker.summary)")
        let peer = try #require(peers.first)
        #expect(peer.commandLine == "descriptor_waits quiet-writer 900")
        #expect(peer.fds.contains { $0.end == "write" }, "\(peer.fds)")
        #expect(peer.threadState?.syscall == "clock_nanosleep", "\(peer.threadState as Any)")
        #expect(peer.threads.map(\.tid) == [child])
        #expect(blocker.summary.hasPrefix("blocked reading pipe:[\(pipe["inode"] ?? "")]"), "\(blocker.summary)")
        #expect(blocker.summary.contains("the other end is held by pid \(child) (quiet-writer)"))
        #expect(blocker.summary.contains("sleeping in clock_nanosleep"))
        if Sanitizer.timingIsMeasurable {
            // The bound is 50 ms for the scan; a debug build on a busy machine gets twice that.
            #expect((blocker.searchMs.value ?? 999) < 100, "\(blocker.searchMs)")
        }
        let xml = try String(contentsOfFile: junit, encoding: .utf8)
        #expect(xml.contains("the other end is held by pid \(child)"), "\(xml)")
        try result.stdout.write(toFile: records, atomically: true, encoding: .utf8)
        let report = try runStallwatch(["report", records])
        #expect(
            report.stdout.contains("waiting on pipes to process `descriptor_waits quiet-writer 900`"),
            "\(report.stdout)")
    }

    @Test func theTextReportNamesThePipesOtherEnd() throws {
        let result = try runStallwatch(["run", "--", try DescriptorWaits.built.get(), "pipe"])
        #expect(result.status == 0, "\(result.stderr)")
        let child = try #require(DescriptorWaits.truth("peer", in: result.stderr)["pid"])
        #expect(result.stdout.contains("blocked reading pipe:["), "\(result.stdout)")
        #expect(result.stdout.contains("pid \(child) (quiet-writer) fd "), "\(result.stdout)")
        #expect(result.stdout.contains("(write end)"))
        #expect(result.stdout.contains("command: descriptor_waits quiet-writer 900"))
    }

    @Test func aSlowLocalTCPServerIsNamedWithBothAddresses() throws {
        let result = try runStallwatch(["run", "--format", "json", "--", try DescriptorWaits.built.get(), "tcp"])
        #expect(result.status == 0, "\(result.stderr)")
        let tcp = DescriptorWaits.truth("tcp", in: result.stderr)
        let server = try #require(Int(DescriptorWaits.truth("peer", in: result.stderr)["pid"] ?? ""))
        let blocker = try onlyBlocker(result, in: "receive_reply")
        #expect(blocker.kind == "descriptor" && blocker.call == "recvfrom" && blocker.object == "tcp")
        #expect(blocker.fd == Int(tcp["fd"] ?? ""))
        let socket = try #require(blocker.socket?.value, "\(blocker.summary)")
        #expect(socket.local == tcp["local"] && socket.remote == tcp["remote"], "\(socket)")
        #expect(socket.state == "ESTABLISHED")
        let peers = try #require(blocker.peers)
        #expect(peers.map(\.pid) == [server], "\(blocker.summary) \(blocker.note as Any)")
        #expect(peers.first?.commandLine?.hasPrefix("descriptor_waits slow-server ") == true)
        #expect(peers.first?.threadState?.syscall == "clock_nanosleep")
        #expect(blocker.summary.contains("TCP \(tcp["local"] ?? "") -> \(tcp["remote"] ?? "") (ESTABLISHED)"))
        #expect(blocker.summary.contains("the peer is pid \(server) (slow-server)"), "\(blocker.summary)")
    }

    @Test func aUnixSocketPairNamesItsPeerFromSockDiag() throws {
        let result = try runStallwatch(["run", "--format", "json", "--", try DescriptorWaits.built.get(), "unix"])
        #expect(result.status == 0, "\(result.stderr)")
        let unix = DescriptorWaits.truth("unix", in: result.stderr)
        let child = try #require(Int(DescriptorWaits.truth("peer", in: result.stderr)["pid"] ?? ""))
        let blocker = try onlyBlocker(result, in: "receive_reply")
        #expect(blocker.kind == "descriptor" && blocker.object == "unixSocket", "\(blocker.summary)")
        #expect(blocker.inode?.value == Int(unix["inode"] ?? ""))
        try #require(blocker.peerInode?.value != nil, "unix_diag unavailable here: \(blocker.note as Any)")
        #expect(blocker.peerInode?.value == Int(unix["peer_inode"] ?? ""))
        #expect(blocker.peers?.map(\.pid) == [child], "\(blocker.summary)")
        #expect(blocker.summary.contains("the peer is pid \(child) (quiet-writer)"))
    }

    @Test func aFIFONamesItsPathAndTheWriter() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fifo-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try runStallwatch(
            ["run", "--format", "json", "--", try DescriptorWaits.built.get(), "fifo", directory])
        #expect(result.status == 0, "\(result.stderr)")
        let fifo = DescriptorWaits.truth("fifo", in: result.stderr)
        let writer = try #require(Int(DescriptorWaits.truth("peer", in: result.stderr)["pid"] ?? ""))
        let blocker = try onlyBlocker(result, in: "read_from_peer")
        #expect(blocker.object == "fifo" && blocker.path?.value == fifo["path"], "\(blocker.summary)")
        #expect(blocker.peers?.map(\.pid) == [writer], "\(blocker.summary)")
        #expect(blocker.peers?.first?.fds.map(\.end) == ["write"])
        #expect(blocker.summary.hasPrefix("blocked reading FIFO \(fifo["path"] ?? "") (fd "), "\(blocker.summary)")
        #expect(blocker.summary.contains("the other end is held by pid \(writer) (fifo-writer)"))
    }
}

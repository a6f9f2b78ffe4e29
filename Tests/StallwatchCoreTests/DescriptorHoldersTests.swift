// The one pass over every process's descriptors: it finds both ends of a pipe this process holds, says which end
// each is, and, with no time left, stops and says the search was cut short.
import Glibc
import Testing

@testable import StallwatchCore

@Suite struct DescriptorHoldersTests {
    /// A pipe of this process, closed after `body`.
    func withPipe(_ body: (Int32, Int32) throws -> Void) throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer {
            close(ends[0])
            close(ends[1])
        }
        try body(ends[0], ends[1])
    }

    @Test func bothEndsOfAPipeAreFoundWithTheirEnds() throws {
        try withPipe { reader, writer in
            let link = try #require(ThreadInspector.descriptorLink(pid: getpid(), descriptor: reader))
            #expect(link.hasPrefix("pipe:["))
            #expect(ThreadInspector.descriptorLink(pid: getpid(), descriptor: writer) == link)
            let found = ThreadInspector.holders(of: [link], near: getpid(), budget: 5_000_000_000)
            #expect(!found.cutShort && found.processes > 0 && found.note == nil)
            let holders = found.holders[link] ?? []
            #expect(Set(holders.map(\.descriptor)) == [reader, writer], "\(holders)")
            #expect(holders.allSatisfy { $0.pid == getpid() })
            #expect(ThreadInspector.descriptorEnd(pid: getpid(), descriptor: reader) == "read")
            #expect(ThreadInspector.descriptorEnd(pid: getpid(), descriptor: writer) == "write")
        }
    }

    @Test func noTimeLeftCutsTheSearchShortAndSaysSo() throws {
        try withPipe { reader, _ in
            let link = try #require(ThreadInspector.descriptorLink(pid: getpid(), descriptor: reader))
            let found = ThreadInspector.holders(of: [link], near: getpid(), budget: 0)
            #expect(found.cutShort)
            #expect(found.note?.hasPrefix("search cut short after ") == true, "\(found.note ?? "")")
        }
    }

    @Test func missingPermissionIsOneLine() {
        var found = DescriptorHolders()
        found.unreadable = 3
        #expect(found.note == "permission to read the descriptors of 3 processes was missing")
        found.unreadable = 1
        found.cutShort = true
        found.processes = 10
        found.nanoseconds = 50_400_000
        #expect(
            found.note
                == "search cut short after 50 ms (10 processes); permission to read the descriptors of 1 process was"
                + " missing")
    }

    @Test func aClosedDescriptorHasNoLink() {
        #expect(ThreadInspector.descriptorLink(pid: getpid(), descriptor: 99_999) == nil)
        #expect(ThreadInspector.descriptorEnd(pid: getpid(), descriptor: 99_999) == nil)
        #expect(ThreadInspector.holders(of: [], near: getpid(), budget: 1_000_000).processes == 0)
    }
}

// Which libraries the program itself needs (CStallwatchAgentSupport's DT_NEEDED walk) and the rule that says whether
// the agent has an event loop to watch in it.
import CStallwatchAgentSupport
import CoreFoundation
import Glibc
import StallwatchCore
import Testing

@Suite struct ProgramLibrariesTests {
    private func programLibraries() -> [String] {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let count = buffer.withUnsafeMutableBytes { sw_agent_program_libraries($0.baseAddress, $0.count) }
        let names = EventLoopLibraries.names(in: buffer)
        #expect(Int(count) == names.count)
        return names
    }

    /// This test bundle links Foundation directly and libdispatch through it: both are found, with libc.
    @Test func findsWhatTheExecutableNeedsDirectlyAndThroughItsLibraries() {
        let names = programLibraries()
        #expect(names.contains("libc.so.6"), "\(names)")
        #expect(names.contains("libFoundation.so"), "\(names)")
        #expect(names.contains { $0.hasPrefix("libdispatch.so") }, "\(names)")
        #expect(EventLoopLibraries.mayRunEventLoop(needing: names))
    }

    /// A library only loaded at run time (as LD_PRELOAD loads the agent and its Foundation) is no need of the
    /// program's.
    @Test func aLibraryLoadedAtRunTimeIsNotANeed() throws {
        // Never closed: unmapping a library while tests running beside this one read this process's images (the
        // toolchain's image map reader does) would pull memory from under them.
        _ = try #require(dlopen("libanl.so.1", RTLD_NOW | RTLD_LOCAL), "libanl is part of glibc")
        #expect(!programLibraries().contains("libanl.so.1"))
    }

    /// A buffer too small for every name holds those that fit, whole.
    @Test func aSmallBufferHoldsWholeNamesOnly() {
        var buffer = [UInt8](repeating: 0xff, count: 24)
        let count = buffer.withUnsafeMutableBytes { sw_agent_program_libraries($0.baseAddress, $0.count) }
        let names = EventLoopLibraries.names(in: buffer.prefix { $0 != 0xff })
        #expect(Int(count) == names.count)
        #expect(names.allSatisfy { !$0.isEmpty && $0.contains(".so") }, "\(names)")
    }

    @Test func theRuleNeedsFoundationOrDispatch() {
        #expect(EventLoopLibraries.mayRunEventLoop(needing: ["libc.so.6", "libdispatch.so"]))
        #expect(EventLoopLibraries.mayRunEventLoop(needing: ["libFoundation.so"]))
        #expect(!EventLoopLibraries.mayRunEventLoop(needing: ["libc.so.6", "libcap-ng.so.0", "libswiftCore.so"]))
        #expect(!EventLoopLibraries.mayRunEventLoop(needing: []))
        #expect(EventLoopLibraries.names(in: Array("a.so\0b.so\0".utf8)) == ["a.so", "b.so"])
    }

    /// The main run loop is looked up, never made: this process's main thread runs no loop of its own until a test
    /// asks for one, and the answer is the loop CFRunLoopGetMain returns once it exists.
    @Test func theMainRunLoopIsFoundWithoutBeingCreated() {
        var known: Int32 = 0
        let existing = sw_agent_existing_main_run_loop(&known)
        #expect(known == 1, "this CoreFoundation answers _CFRunLoopGet0b")
        let main = Unmanaged.passUnretained(CFRunLoopGetMain()).toOpaque()
        #expect(existing == nil || existing == main)
        #expect(sw_agent_existing_main_run_loop(nil) == main)
    }
}

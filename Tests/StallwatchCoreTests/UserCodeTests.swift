// The culprit is code the user wrote: rules over real demangled names (from swiftc 6.3 builds and the issue).
import Testing

@testable import StallwatchCore

@Suite struct UserCodeTests {
    static let userFile = "/work/app/Sources/App/Store.swift"
    static let toolchainFile = "/home/build-user/swift/stdlib/public/core/Collection.swift"

    /// Not written by the program's author, with or without a source location.
    @Test(
        arguments: [
            ("protocol witness for static Equatable.== infix(_:_:) in conformance Int", nil, nil),
            ("protocol witness for Decodable.init(from:) in conformance MappedCode", nil, nil),
            ("specialized IndexingIterator.next()", nil, nil),
            ("specialized IndexingIterator.next()", toolchainFile, 71),
            ("specialized Collection.map<A>(_:)", nil, nil),
            ("specialized Array.append(_:)", userFile, 3),
            ("specialized _copyCollectionToContiguousArray<A>(_:)", nil, nil),
            ("generic specialization <Swift.Int> of Swift.Array.append(_:)", nil, nil),
            ("Item.init(from:)", "<compiler-generated>", 0),
            ("thunk for @escaping @callee_guaranteed () -> ()", "<compiler-generated>", 0),
            ("reabstraction thunk helper from @escaping @callee_guaranteed () -> () to @callee_unowned", nil, nil),
            ("partial apply for thunk for @escaping @convention(thin) @async () -> ()", nil, nil),
            ("outlined destroy of RunSummary", nil, nil),
            ("outlined init with copy of RunSummary", "<compiler-generated>", 0),
            ("static MainActor.run<A>(resultType:body:)", "<compiler-generated>", 0),
            ("static Date.timeIntervalSinceReferenceDate.getter", nil, nil),
            ("RunLoop.run(until:)", nil, nil),
            ("closure #1 in Collection.map<A>(_:)", nil, nil),
            ("swift_retain", nil, nil),
            ("swift::runJobInEstablishedExecutorContext(swift::Job*)", nil, nil),
            ("__CFRunLoopRun", nil, nil),
            ("_dispatch_lane_serial_drain", nil, nil),
            ("@objc __NSFireTimer(_:info:)", nil, nil),
            ("type metadata accessor for Store", nil, nil),
        ] as [(String, String?, Int?)])
    func notUserWritten(symbol: String, file: String?, line: Int?) {
        #expect(!UserCode.isUserWritten(symbol: symbol, file: file, line: line), "\(symbol)")
    }

    @Test(
        arguments: [
            ("static ChecksumEngine.crunchChecksums(until:)", "/work/main/Sources/stallwatch-demo/Culprits.swift", 41),
            ("closure #1 in static App.main()", "/tmp/async.swift", 8),
            ("closure #1 in closure #4 in DemoScenario.installRoutineWork(_:)", userFile, 9),
            ("Store.load()", nil, nil),
            ("specialized Store.load<A>(_:)", nil, nil),
            ("Array.sortedByPriority()", userFile, 12),
            ("(3) suspend resume partial function for Store.refresh()", userFile, 20),
            ("merged Store.flush()", nil, nil),
            ("_PyEval_EvalFrameDefault", nil, nil),
            ("crunch", "/src/crunch.c", 10),
            ("Parser::parse(std::string const&)", "/src/parser.cpp", 33),
        ] as [(String, String?, Int?)])
    func userWritten(symbol: String, file: String?, line: Int?) {
        #expect(UserCode.isUserWritten(symbol: symbol, file: file, line: line), "\(symbol)")
    }

    @Test func theSubjectIsTheTypePastTheQualifiers() {
        #expect(UserCode.subjectType(of: "specialized Collection.map<A>(_:)") == "Collection")
        #expect(UserCode.subjectType(of: "closure #1 in static App.main()") == "App")
        #expect(UserCode.subjectType(of: "(3) suspend resume partial function for Store.refresh()") == "Store")
        #expect(UserCode.subjectType(of: "generic specialization <Swift.Int> of Swift.Array.append(_:)") == "Swift")
    }

    private func frame(_ symbol: String, image: String = "/app/App", file: String? = nil, line: Int? = nil) -> Frame {
        Frame(address: 0x1000, image: image, offset: 0x10, symbol: symbol, file: file, line: line)
    }

    @Test func theCulpritIsTheNearestUserWrittenFrameAndTheStackStaysWhole() {
        let frames = [
            frame("__memcmp_avx2_movbe", image: "/usr/lib/x86_64-linux-gnu/libc.so.6"),
            frame(
                "protocol witness for static Equatable.== infix(_:_:) in conformance Int", file: "<compiler-generated>",
                line: 0),
            frame("specialized IndexingIterator.next()", file: Self.toolchainFile, line: 71),
            frame("Item.init(from:)", file: "<compiler-generated>", line: 0),
            frame("Inventory.findDuplicates()", file: Self.userFile, line: 40),
            frame("thunk for @escaping @callee_guaranteed () -> ()", file: "<compiler-generated>", line: 0),
            frame("Inventory.reload()", file: Self.userFile, line: 12),
        ]
        let stall = StallReport(
            identifier: 1, pid: 1, tid: 1, processName: "App", phase: .afterWaiting, start: 0, end: 10, detectedAt: 5,
            thresholdNanoseconds: 1, count: 3, captureMethod: .ptrace,
            samples: [Sample(frames: frames, capturedAt: 5), Sample(frames: frames, capturedAt: 6)])
        #expect(stall.culprit?.symbol == "Inventory.findDuplicates()")
        #expect(stall.dominantFrame?.symbol == "Inventory.findDuplicates()")
        #expect(stall.samples[0].frames.count == 7, "the innermost frames stay in the stack")
        #expect(stall.samples[0].frames[0].symbol == "__memcmp_avx2_movbe")
    }

    @Test func withNoUserWrittenFrameTheProgramsImageStandsIn() {
        let frames = [frame("specialized IndexingIterator.next()"), frame("main")]
        let stall = StallReport(
            identifier: 1, pid: 1, tid: 1, processName: "App", phase: .afterWaiting, start: 0, end: 10, detectedAt: 5,
            thresholdNanoseconds: 1, count: 3, captureMethod: .ptrace, samples: [Sample(frames: frames, capturedAt: 5)])
        #expect(stall.culprit?.symbol == "specialized IndexingIterator.next()")
    }

    /// An interpreter's native stack (python3, names from its symbol table, no source lines): two script-level
    /// stalls share the eval loop and its two callers; only the path further out tells them apart.
    @Test func interpreterStallsReachedByDifferentPathsDoNotShareAFingerprint() {
        let python = "/usr/bin/python3.11"
        func stall(_ path: [String]) -> StallReport {
            let frames =
                [frame("time_sleep", image: python), frame("_PyEval_EvalFrameDefault", image: python)]
                + path.map { frame($0, image: python) }
                + ["_PyEval_EvalFrameDefault", "_PyEval_EvalFrameDefault", "PyEval_EvalCode", "Py_RunMain"].map {
                    frame($0, image: python)
                }
            return StallReport(
                identifier: 1, pid: 1, tid: 1, processName: "python3", phase: .notStarted, start: 0, end: 10,
                detectedAt: 5, thresholdNanoseconds: 1, count: 3, captureMethod: .ptrace,
                samples: [Sample(frames: frames, capturedAt: 5)])
        }
        let direct = stall(["_PyEval_Vector", "_PyFunction_Vectorcall"])
        let throughMap = stall(["_PyEval_Vector", "_PyFunction_Vectorcall", "map_next", "list_extend"])
        #expect(direct.fingerprint != throughMap.fingerprint)
        #expect(direct.fingerprint == stall(["_PyEval_Vector", "_PyFunction_Vectorcall"]).fingerprint)
    }
}

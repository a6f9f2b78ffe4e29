// Who had the CPUs while a stall waited for one: two readings compared, the stalled thread left out, garbage refused.

import StallwatchCore
import Testing

struct CPUCensusTests {
    private typealias Entry = CPUCensus.Reading.Entry

    @Test func theLargestUsersOfTheWindowComeFirstAndTheStalledThreadIsLeftOut() throws {
        let before = CPUCensus.Reading(
            processes: [
                10: Entry(name: "hog", cpuNanoseconds: 1_000_000_000), 11: Entry(name: "idle", cpuNanoseconds: 5),
            ],
            threads: [100: Entry(name: "loop", cpuNanoseconds: 0), 101: Entry(name: "worker", cpuNanoseconds: 0)],
            at: 1_000_000_000)
        let after = CPUCensus.Reading(
            processes: [
                10: Entry(name: "hog", cpuNanoseconds: 1_390_000_000), 11: Entry(name: "idle", cpuNanoseconds: 5),
                12: Entry(name: "newcomer", cpuNanoseconds: 20_000_000),
            ],
            threads: [
                100: Entry(name: "loop", cpuNanoseconds: 200_000_000),
                101: Entry(name: "worker", cpuNanoseconds: 100_000_000),
            ],
            at: 1_400_000_000)
        let census = try #require(CPUCensus.between(before, after, stalledPid: 99, stalledTid: 100))
        #expect(census.windowNanoseconds == 400_000_000)
        #expect(census.holders.map(\.name) == ["hog", "worker", "newcomer"], "idle used nothing; loop is the stall")
        #expect(census.holders[1].tid == 101 && census.holders[1].pid == 99)
        #expect(census.percentOfACPU(census.holders[0]) == 97.5)
        #expect(census.summary.hasPrefix("hog (pid 10) 98 %, worker (tid 101, this process) 25 %"))
    }

    @Test func atMostFiveAndNothingFromACountThatWentDown() throws {
        let processes = Dictionary(
            uniqueKeysWithValues: (1...8).map { (Int32($0), Entry(name: "p\($0)", cpuNanoseconds: 0)) })
        var later = processes.mapValues { Entry(name: $0.name, cpuNanoseconds: 10) }
        later[3] = Entry(name: "reused", cpuNanoseconds: 0)
        let before = CPUCensus.Reading(
            processes: processes.merging([3: Entry(name: "p3", cpuNanoseconds: 99)]) { $1 }, threads: [:], at: 0)
        let census = try #require(
            CPUCensus.between(
                before, CPUCensus.Reading(processes: later, threads: [:], at: 1), stalledPid: 0, stalledTid: 0))
        #expect(census.holders.count == CPUCensus.holdersKept)
        #expect(!census.holders.contains { $0.name == "reused" })
        #expect(CPUCensus.between(before, before, stalledPid: 0, stalledTid: 0) == nil, "an empty window")
    }
}

struct CensusReadingTests {
    @Test func aStatLineGivesItsNameAndCPUTime() throws {
        let line = "4312 (cpu hog (x)) R 1 4312 4312 0 -1 4194560 90 0 0 0 250 150 0 0 20 0 1 0 100 0 0"
        let entry = try #require(ThreadInspector.censusEntry(stat: line, tick: 100))
        #expect(entry.name == "cpu hog (x)")
        #expect(entry.cpuNanoseconds == 4_000_000_000, "250 + 150 ticks of 10 ms")
    }

    @Test(arguments: [
        "", "garbage", "1 (x", "1 x) R", "1 (x) R 1 2", "1 (x) R 1 1 1 0 -1 0 0 0 0 0 -5 3 0",
        "1 (x) R 1 1 1 0 -1 0 0 0 0 0 18446744073709551615 18446744073709551615 0",
    ])
    func garbageGivesNothing(line: String) {
        #expect(ThreadInspector.censusEntry(stat: line, tick: 100) == nil)
    }

    @Test func thisMachineReadsAndNamesItsOwnProcess() {
        let reading = ThreadInspector.censusReading(stalledPid: 1, now: 1)
        #expect(!reading.processes.isEmpty)
        #expect(reading.processes[1] == nil, "the stalled process is read by thread, not as a whole")
    }
}

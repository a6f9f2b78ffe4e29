// Workloads that treat the descriptors and threads they inherit as their own: daemons that close every inherited
// descriptor or dup2 over them, and wrappers that drop privileges. The agent must not break them, and what it
// cannot watch afterwards is said.
import Foundation
import StallwatchTestSupport
import Testing

@Suite(.serialized) struct InheritedDescriptorTests {
    /// CPU seconds used by this process's waited-for children so far (stallwatch and what it reaped).
    private func childrenCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(Int32(RUSAGE_CHILDREN.rawValue), &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// A daemon that closes descriptors 3–4095 before it makes its run loop: its timers fire (they never did when
    /// the agent had made the main run loop, and so its descriptors, before `main`), stallwatch does not spin on the
    /// hung-up socket, and the summary says the watch ended there.
    @Test func aProgramThatClosesEveryInheritedDescriptorKeepsItsTimers() throws {
        let program = try compileSwift(
            """
            import Foundation
            for descriptor in Int32(3)..<4096 { close(descriptor) }
            var fired = 0
            let timer = Timer(timeInterval: 0.1, repeats: true) { _ in
                fired += 1
                if fired == 20 { print("timers fired \\(fired)"); exit(0) }
            }
            RunLoop.main.add(timer, forMode: .default)
            RunLoop.main.run(until: Date(timeIntervalSinceNow: 10))
            print("timers fired \\(fired) of 20")
            exit(1)
            """, name: "closer")
        defer { try? FileManager.default.removeItem(atPath: (program as NSString).deletingLastPathComponent) }
        let cpuBefore = childrenCPUSeconds()
        let result = try runStallwatch(["run", "--", program], timeout: 60)
        let cpu = childrenCPUSeconds() - cpuBefore
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.contains("timers fired 20"), "\(result.stdout)")
        #expect((result.stdout + result.stderr).contains("closed stallwatch's socket"), "\(result.stdout)")
        #expect(!result.stdout.contains("never ran"), "\(result.stdout)")
        // The workload runs about 2 s and sleeps through it; a collector spinning on the socket burned one CPU.
        #expect(cpu < 1.0, "stallwatch and the workload used \(cpu) s of CPU in a 2 s run")
    }

    /// A program that dup2s a socket of its own over the agent's descriptor: the agent's later messages (the stall,
    /// the busy periods) must never arrive on the program's socket.
    @Test func aProgramThatReusesTheAgentsDescriptorNeverReceivesItsMessages() throws {
        let program = try compileSwift(
            """
            import Foundation
            guard let agent = ProcessInfo.processInfo.environment["STALLWATCH_AGENT_FD"].flatMap(Int32.init) else {
                print("no agent descriptor"); exit(2)
            }
            var pair: [Int32] = [0, 0]
            guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &pair) == 0 else { exit(3) }
            dup2(pair[0], agent)
            close(pair[0])
            var fired = 0
            let timer = Timer(timeInterval: 0.1, repeats: true) { _ in
                fired += 1
                if fired == 3 { usleep(1_500_000) }
                guard fired == 15 else { return }
                var buffer = [UInt8](repeating: 0, count: 65536)
                var foreign = 0
                while recv(pair[1], &buffer, buffer.count, Int32(MSG_DONTWAIT)) > 0 { foreign += 1 }
                print("foreign messages \\(foreign)")
                exit(0)
            }
            RunLoop.main.add(timer, forMode: .default)
            RunLoop.main.run(until: Date(timeIntervalSinceNow: 20))
            exit(1)
            """, name: "reuser")
        defer { try? FileManager.default.removeItem(atPath: (program as NSString).deletingLastPathComponent) }
        let result = try runStallwatch(["run", "--threshold", "100ms", "--", program], timeout: 60)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.contains("foreign messages 0"), "\(result.stdout)")
        #expect((result.stdout + result.stderr).contains("closed stallwatch's socket"), "\(result.stdout)")
    }

    /// The agent attaches to the main loop when the program makes it, not before `main`: a stall in the very first
    /// callout of a loop made after a long set-up is found, with its own length (the set-up is no stall).
    @Test func aStallInTheFirstCalloutOfALateLoopIsFound() throws {
        let program = try compileSwift(
            """
            import Foundation
            @inline(never) func blockInFirstCallout() { usleep(1_200_000) }
            usleep(700_000)
            RunLoop.main.perform { blockInFirstCallout() }
            RunLoop.main.run(until: Date(timeIntervalSinceNow: 1.6))
            """, name: "late")
        defer { try? FileManager.default.removeItem(atPath: (program as NSString).deletingLastPathComponent) }
        let result = try runStallwatch(["run", "--threshold", "100ms", "--format", "json", "--", program], timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        let stalls = try result.stalls
        #expect(stalls.count == 1, "\(result.stdout)")
        let stall = try #require(stalls.first)
        #expect(stall.culprit?.symbol?.contains("blockInFirstCallout") == true, "\(result.stdout)")
        let duration = try #require(stall.durationMs.value)
        #expect(abs(duration - 1200) < 150, "the stall is the callout, not the set-up: \(duration) ms")
    }

    /// `setpriv` drops its privileges through glibc's set-id broadcast to every thread; with a watcher thread of the
    /// agent's among them it aborted. A program that needs no event-loop library gets no agent thread.
    @Test(.enabled(if: geteuid() == 0, "setting another user id needs root"))
    func aWrapperThatDropsPrivilegesRunsItsCommand() throws {
        let result = try runStallwatch(
            ["run", "--", "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "id", "-u"], timeout: 60)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.split(separator: "\n").first == "65534", "\(result.stdout)")
    }

    /// `env LD_PRELOAD=x.so PROGRAM` replaces the agent in the program it starts: the summary names the program and
    /// the cause, not a run loop that never ran.
    @Test func aWrapperThatReplacesLDPreloadIsNamed() throws {
        let library = try compile(
            "void preloaded_marker(void) {}", language: "c", output: "x.so",
            extraArguments: [
                "-shared", "-fPIC",
            ])
        defer { try? FileManager.default.removeItem(at: library) }
        let preload = library.appendingPathComponent("x.so").path
        let result = try runStallwatch(
            ["run", "--", "env", "LD_PRELOAD=\(preload)", Products.demo, "--stalls", "1"], timeout: 60)
        let output = result.stdout + result.stderr
        #expect(result.status == 0, "\(output)")
        #expect(output.contains("(stallwatch-demo) was started with LD_PRELOAD=\(preload)"), "\(output)")
        #expect(!output.contains("never ran"), "\(output)")
    }

    /// The rule itself, seen from the program: a C program's only thread is its own.
    @Test func aCProgramGetsNoAgentThread() throws {
        let directory = try compile(
            """
            #include <dirent.h>
            #include <stdio.h>
            #include <unistd.h>
            int main(void) {
                usleep(300000);
                int threads = 0;
                DIR *tasks = opendir("/proc/self/task");
                for (struct dirent *entry; (entry = readdir(tasks)) != NULL;) threads += entry->d_name[0] != '.';
                printf("threads %d\\n", threads);
                return 0;
            }
            """, language: "c", output: "threads")
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try runStallwatch(["run", "--", directory.appendingPathComponent("threads").path], timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("threads 1\n"), "\(result.stdout)")
    }
}

// Every x86-64 system call has its name; a negative number (not in a system call) has none.
import Testing

@testable import StallwatchCore

@Suite struct SyscallNamesTests {
    @Test(arguments: [
        (0, "read"), (7, "poll"), (35, "nanosleep"), (130, "rt_sigsuspend"), (202, "futex"), (219, "restart_syscall"),
        (230, "clock_nanosleep"), (232, "epoll_wait"), (281, "epoll_pwait"), (435, "clone3"), (441, "epoll_pwait2"),
        (449, "futex_waitv"),
    ])
    func namesTheCall(number: Int, name: String) {
        #expect(SyscallNames.name(number) == name)
    }

    @Test func everyNumberUpToTheLastHasAName() {
        let named = (0..<SyscallNames.table.count).filter { !SyscallNames.table[$0].isEmpty }
        #expect(named.count > 350)
        #expect(SyscallNames.name(-1) == nil, "not in a system call")
        #expect(SyscallNames.name(100_000) == "syscall 100000", "a newer kernel's call keeps its number")
    }
}

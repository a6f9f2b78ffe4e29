// The system call a blocked thread is in, with its arguments, the futex operations among them, and the descriptor a
// read, write or poll waits on.

/// One reading of `/proc/PID/task/TID/syscall`: the call's number and its six arguments.
///
/// Read before the thread is stopped: a ptrace stop interrupts the call, which the kernel then shows as
/// `restart_syscall` or as the same call with other registers.
public struct SyscallReading: Equatable, Sendable {
    public var number: Int
    /// The six argument registers, as the kernel prints them (the upper half of an `int` argument may be garbage).
    public var arguments: [UInt64]

    public init(number: Int, arguments: [UInt64]) {
        self.number = number
        self.arguments = arguments
    }

    /// Parses `202 0x55adcf88f0e0 0x80 0x2 0x0 0x0 0x0 0x7fff04f28858 0x7f6fc468712b`; nil for a thread that is
    /// running or not in a system call (`running`, `-1 …`), or a line that is not one.
    public init?(line: some StringProtocol) {
        let fields = line.split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard fields.count >= 7, let number = Int(fields[0]), number >= 0 else { return nil }
        var arguments: [UInt64] = []
        for field in fields[1...6] {
            guard field.hasPrefix("0x"), let value = UInt64(field.dropFirst(2), radix: 16) else { return nil }
            arguments.append(value)
        }
        self.init(number: number, arguments: arguments)
    }

    /// The call's name from the x86-64 table.
    public var name: String? { SyscallNames.name(number) }

    /// The `index`th argument as the `int` the kernel takes (the register's low 32 bits).
    public func intArgument(_ index: Int) -> Int32 {
        Int32(truncatingIfNeeded: arguments[index])
    }

    /// x86-64 numbers of the calls stallwatch looks into.
    public static let futex = 202
    public static let wait4 = 61
    public static let waitid = 247
    public static let poll = 7
    public static let ppoll = 271

    /// Calls whose first argument is the one descriptor they block on: `read`, `write`, `pread64`, `pwrite64`,
    /// `readv`, `writev`, `sendto`, `recvfrom`, `sendmsg`, `recvmsg`.
    public static let descriptorCalls: Set<Int> = [0, 1, 17, 18, 19, 20, 44, 45, 46, 47]

    /// Whether the call waits on descriptors: one of ``descriptorCalls``, `poll` or `ppoll`.
    public var waitsOnDescriptor: Bool {
        Self.descriptorCalls.contains(number) || number == Self.poll || number == Self.ppoll
    }

    /// The descriptor a ``descriptorCalls`` call blocks on; nil for another call or a negative number.
    public var descriptor: Int32? {
        guard Self.descriptorCalls.contains(number) else { return nil }
        let descriptor = intArgument(0)
        return descriptor >= 0 ? descriptor : nil
    }

    /// For `poll` and `ppoll` on one descriptor, the address of its `struct pollfd`; nil for more (or none).
    public var singlePollAddress: UInt64? {
        guard number == Self.poll || number == Self.ppoll, arguments[1] == 1, arguments[0] != 0 else { return nil }
        return arguments[0]
    }
}

/// A futex operation (`futex(2)`'s second argument): the command and its flags.
public struct FutexOperation: Equatable, Sendable {
    public let raw: UInt32

    public init(_ raw: UInt32) {
        self.raw = raw
    }

    static let privateFlag: UInt32 = 128
    static let clockRealtime: UInt32 = 256

    /// The command without the private and clock flags (`FUTEX_CMD_MASK`).
    public var command: UInt32 { raw & ~(Self.privateFlag | Self.clockRealtime) }

    static let names: [UInt32: String] = [
        0: "FUTEX_WAIT", 1: "FUTEX_WAKE", 2: "FUTEX_FD", 3: "FUTEX_REQUEUE", 4: "FUTEX_CMP_REQUEUE",
        5: "FUTEX_WAKE_OP", 6: "FUTEX_LOCK_PI", 7: "FUTEX_UNLOCK_PI", 8: "FUTEX_TRYLOCK_PI", 9: "FUTEX_WAIT_BITSET",
        10: "FUTEX_WAKE_BITSET", 11: "FUTEX_WAIT_REQUEUE_PI", 12: "FUTEX_CMP_REQUEUE_PI", 13: "FUTEX_LOCK_PI2",
    ]

    /// `FUTEX_WAIT_PRIVATE`, `FUTEX_WAIT_BITSET|FUTEX_CLOCK_REALTIME`, `FUTEX_OP_99` for one the kernel does not have.
    public var name: String {
        var name = Self.names[command] ?? "FUTEX_OP_\(command)"
        if raw & Self.privateFlag != 0 { name += "_PRIVATE" }
        if raw & Self.clockRealtime != 0 { name += "|FUTEX_CLOCK_REALTIME" }
        return name
    }

    /// A wait for the word to change (`FUTEX_WAIT`, `FUTEX_WAIT_BITSET`): what glibc's mutexes (but PI ones),
    /// condition variables, rwlocks, semaphores and joins do.
    public var isPlainWait: Bool { command == 0 || command == 9 }

    /// Taking a priority-inheritance lock: the kernel's own protocol, in which the word holds the owner's tid.
    public var locksPriorityInheritance: Bool { command == 6 || command == 8 || command == 13 }

    /// The condition-variable wait that requeues to a PI mutex.
    public var waitsRequeuePriorityInheritance: Bool { command == 11 }
}

extension ChildWait.Target {
    /// What a `wait4` or `waitid` call waits for, from its arguments; nil for another call, or a `waitid` of a
    /// kind this does not know.
    ///
    /// `wait4(pid, …)`: a pid > 0 is that child, -1 any child, 0 any child in the caller's process group, < -1 any
    /// child in group -pid. `waitid(idtype, id, …)`: `P_ALL` (0), `P_PID` (1), `P_PGID` (2, 0 for the caller's);
    /// `P_PIDFD` (3) names the child by a descriptor, which ``pidDescriptor`` leaves to the caller to look up.
    public init?(call: SyscallReading) {
        switch call.number {
        case SyscallReading.wait4:
            let pid = call.intArgument(0)
            if pid > 0 {
                self = .child(pid)
            } else if pid == -1 {
                self = .anyChild
            } else {
                // 0: the caller's own group; Int32.min has no positive counterpart and names no group.
                guard pid != Int32.min else { return nil }
                self = .processGroup(-pid)
            }
        case SyscallReading.waitid:
            let id = call.intArgument(1)
            switch call.intArgument(0) {
            case 0: self = .anyChild
            case 1 where id > 0: self = .child(id)
            case 2 where id >= 0: self = .processGroup(id)
            case 3 where id >= 0: self = .pidDescriptor(id)
            default: return nil
            }
        default:
            return nil
        }
    }
}

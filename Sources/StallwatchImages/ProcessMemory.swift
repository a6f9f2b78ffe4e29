// Reading words of a live process's memory without stopping it, failing instead of faulting.
import CStallwatchSystem
import Glibc
import StallwatchCore

/// A process's memory, read with `process_vm_readv`: the process runs on, a bad address is an error (`EFAULT`),
/// never a crash, which makes it fit for memory that may be stale or hostile. Reading another process needs the
/// permission ptrace needs; a process may always read itself this way.
public struct ProcessMemory: ProcessMemoryReader {
    public let pid: Int32

    public init(pid: Int32) {
        self.pid = pid
    }

    /// This process's own memory (the agent's in-process capture).
    public static var current: ProcessMemory { ProcessMemory(pid: getpid()) }

    public func word(at address: UInt64) throws(MemoryReadError) -> UInt64 {
        var value: UInt64 = 0
        let count = withUnsafeMutableBytes(of: &value) { buffer in
            sw_read_process_memory(pid, UInt(address), buffer.baseAddress, 8)
        }
        guard count == 8 else { throw MemoryReadError(address: address, errno: count < 0 ? errno : 0) }
        return UInt64(littleEndian: value)
    }
}

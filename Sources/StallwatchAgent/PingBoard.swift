// Where main-queue pings record that they ran: the ping strategy's counterpart of the ActivityBoard.
import CStallwatchAgentSupport
import Dispatch
import StallwatchCore
import Synchronization

/// Posts pings to the main dispatch queue and records their answers, lock-free.
final class PingBoard: Sendable {
    static let shared = PingBoard()

    /// The answered sequence (low 32 bits) and the answering thread (high 32 bits), in one word.
    private let answer = Atomic<UInt64>(0)
    private let answerTime = Atomic<UInt64>(0)

    /// Posts ping `sequence`; the block costs the main queue one clock read and two stores.
    func post(_ sequence: UInt64) {
        DispatchQueue.main.async {
            let time = sw_agent_now_ns()
            let thread = UInt64(UInt32(bitPattern: sw_agent_gettid()))
            self.answerTime.store(time, ordering: .relaxed)
            self.answer.store(thread << 32 | (sequence & 0xFFFF_FFFF), ordering: .releasing)
        }
    }

    /// The latest answer, if any ping was answered yet.
    func latest() -> PingDetector.Answer? {
        let word = answer.load(ordering: .acquiring)
        guard word != 0 else { return nil }
        return PingDetector.Answer(
            sequence: word & 0xFFFF_FFFF, time: answerTime.load(ordering: .relaxed),
            thread: Int32(bitPattern: UInt32(word >> 32)))
    }
}

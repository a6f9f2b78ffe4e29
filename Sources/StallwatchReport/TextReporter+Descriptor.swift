// A descriptor blocker as text: the object, and each process at its other end with its descriptors, command and
// threads.
import StallwatchCore

extension TextReporter {
    /// `blocked reading pipe:[12345] (fd 3); the other end is held by:`, then each peer process.
    func descriptorLines(_ wait: DescriptorWait, indent: String = "  ") -> [String] {
        let object = "blocked \(wait.verb) \(wait.object.phrase) (fd \(wait.descriptor), \(wait.call))"
        var lines = [style.bold("\(indent)\(object)" + (wait.peers.isEmpty ? "" : "; \(wait.peerRole):"))]
        for peer in wait.peers {
            let descriptors = peer.descriptors.map { "fd \($0.descriptor)" + ($0.end.map { " (\($0) end)" } ?? "") }
            lines.append(
                "\(indent)  \(peer.label) \(descriptors.joined(separator: ", ")), \(peer.activity)")
            if let command = peer.commandLine { lines.append("\(indent)    command: \(command)") }
            for thread in peer.threads {
                let doing = BlockingThread(tid: thread.tid, name: thread.name, state: thread.state).activity
                lines.append("\(indent)    thread \(thread.name ?? "?") (tid \(thread.tid)): \(doing)")
            }
        }
        if let note = wait.note { lines.append("\(indent)  note: \(note)") }
        return lines
    }
}

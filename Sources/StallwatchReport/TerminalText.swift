// Text from the watched process (its name, its threads' names, symbols and paths from its files, its agent's words)
// is untrusted: on a terminal or in a log it must never become a line of its own or an escape sequence.

/// Makes untrusted text safe to print as part of one line.
public enum TerminalText {
    /// The bold on and off sequences the text reporter adds itself (``TextStyle``).
    static let ownStyles = ["\u{1B}[1m", "\u{1B}[0m"]

    /// `line` with every control character (C0, DEL, C1), and the Unicode controls that reorder how text displays,
    /// written as a visible escape (`\n`, `\x1b`, `\u{202e}`); so a thread named `"x\nthread 1 ..."` cannot forge a
    /// line and a process name cannot set a terminal's title or colours.
    ///
    /// - Parameter keepingStyles: leave the reporter's own bold sequences as they are.
    public static func escaped(_ line: String, keepingStyles: Bool = false) -> String {
        guard line.unicodeScalars.contains(where: needsEscape) else { return line }
        var result = ""
        var rest = Substring(line)
        while let first = rest.first {
            if keepingStyles, let style = ownStyles.first(where: { rest.hasPrefix($0) }) {
                result += style
                rest = rest.dropFirst(style.count)
                continue
            }
            for scalar in first.unicodeScalars {
                result += needsEscape(scalar) ? escape(scalar) : String(scalar)
            }
            rest = rest.dropFirst()
        }
        return result
    }

    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        // C0, DEL, C1; the marks and embeddings, overrides and isolates that reorder text (U+061C ARABIC LETTER
        // MARK is a mark like U+200E and U+200F).
        case 0..<0x20, 0x7F..<0xA0, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    static func escape(_ scalar: Unicode.Scalar) -> String {
        switch scalar {
        case "\n": return "\\n"
        case "\r": return "\\r"
        case "\t": return "\\t"
        default:
            let hex = String(scalar.value, radix: 16)
            return scalar.value < 0x100
                ? "\\x" + String(repeating: "0", count: 2 - hex.count) + hex : "\\u{" + hex + "}"
        }
    }

    /// Lines joined into a report: each line escaped (keeping the reporter's own bold), then the line breaks.
    static func lines(_ lines: [String]) -> String {
        lines.map { escaped($0, keepingStyles: true) }.joined(separator: "\n")
    }
}

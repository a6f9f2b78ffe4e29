// swift-argument-parser's help layout: 80 columns, section titles, and a two-column list whose
// descriptions start at column 26 and wrap under themselves.

enum UsageLayout {
    static let screenWidth = 80
    /// The column where a row's description starts.
    static let labelColumnWidth = 26
    /// The indentation of a row's label.
    static let rowIndent = 2

    /// A section: its title on one line, then its rows.
    static func section(_ title: String, rows: [(label: String, abstract: String)]) -> String {
        "\(title):\n" + rows.map { row(label: $0.label, abstract: $0.abstract) }.joined()
    }

    /// One row: the label, and the abstract wrapped at ``labelColumnWidth``; on the next line when
    /// the label is too wide to leave room.
    static func row(label: String, abstract: String) -> String {
        let paddedLabel = String(repeating: " ", count: rowIndent) + label
        let wrapped = wrap(abstract, indent: labelColumnWidth)
        guard !abstract.isEmpty else { return paddedLabel + "\n" }
        if paddedLabel.count < labelColumnWidth {
            return paddedLabel + wrapped.dropFirst(paddedLabel.count) + "\n"
        }
        return paddedLabel + "\n" + wrapped + "\n"
    }

    /// Word-wraps `text` to ``screenWidth`` columns, every line starting with `indent` spaces.
    ///
    /// Newlines in `text` are kept; a line that starts with a space, such as an example command, is
    /// kept as it is; a word longer than a line gets a line of its own.
    static func wrap(_ text: String, indent: Int = 0) -> String {
        let margin = String(repeating: " ", count: indent)
        let paragraphs = text.split(separator: "\n", omittingEmptySubsequences: false)
        return paragraphs.map { paragraph in
            if paragraph.hasPrefix(" ") { return margin + paragraph }
            var lines: [String] = []
            var line = ""
            for word in paragraph.split(separator: " ") {
                if !line.isEmpty, margin.count + line.count + 1 + word.count > screenWidth {
                    lines.append(margin + line)
                    line = ""
                }
                line += line.isEmpty ? String(word) : " " + word
            }
            lines.append(line.isEmpty ? "" : margin + line)
            return lines.joined(separator: "\n")
        }
        .joined(separator: "\n")
    }
}

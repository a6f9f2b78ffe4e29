// The benchmarks' tables: Markdown, printed as they are and pasted into docs/benchmarks.md as they are.

/// A Markdown table, padded so it also reads well in a terminal.
struct ResultTable {
    let title: String
    let header: [String]
    private(set) var rows: [[String]] = []

    init(_ title: String, header: [String]) {
        self.title = title
        self.header = header
    }

    mutating func add(_ row: [String]) {
        rows.append(row)
    }

    /// The first column left-aligned, the others (numbers) right-aligned.
    var rendered: String {
        let widths = header.indices.map { column in
            ([header] + rows).map { $0.indices.contains(column) ? $0[column].count : 0 }.max() ?? 0
        }
        func line(_ cells: [String]) -> String {
            let padded = header.indices.map { column in
                let cell = cells.indices.contains(column) ? cells[column] : ""
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                return column == 0 ? cell + padding : padding + cell
            }
            return "| " + padded.joined(separator: " | ") + " |"
        }
        let rule = widths.indices.map { column in
            String(repeating: "-", count: widths[column] + 1) + (column == 0 ? "-" : ":")
        }
        return ([title, "", line(header), "|" + rule.joined(separator: "|") + "|"] + rows.map(line))
            .joined(separator: "\n")
    }
}

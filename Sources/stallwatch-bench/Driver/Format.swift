// Number formats shared by the benchmark tables.
import Foundation

enum Format {
    /// `value` to `places` decimals; a value that rounds to zero is "0" (never "-0": a difference of two equal counts).
    static func fixed(_ value: Double, _ places: Int) -> String {
        let text = String(format: "%.\(places)f", value)
        return text.hasPrefix("-") && text.dropFirst().allSatisfy { $0 == "0" || $0 == "." }
            ? String(text.dropFirst()) : text
    }

    static func milliseconds(_ nanoseconds: Double) -> String { fixed(nanoseconds / 1e6, 3) + " ms" }

    static func percent(_ fraction: Double) -> String { fixed(fraction * 100, 2) + " %" }

    static func mebibytes(_ kibibytes: Int) -> String { fixed(Double(kibibytes) / 1024, 1) + " MiB" }

    /// A rate with thousands grouped: `316 420/s`.
    static func rate(_ perSecond: Double) -> String {
        var rest = String(Int(perSecond.rounded()))
        var groups: [String] = []
        while rest.count > 3 {
            groups.insert(String(rest.suffix(3)), at: 0)
            rest.removeLast(3)
        }
        return ([rest] + groups).joined(separator: " ") + "/s"
    }
}

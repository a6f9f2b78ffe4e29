// What a stack dump shows of a stalled Swift program: its culprit's name, demangled or not, and where in the
// source it is.

/// What one tool's output names of the demo's `cpu` stall, found by looking for the culprit in it.
struct StackShows {
    /// The culprit as Swift writes it; a demangled stack contains it.
    static let culprit = "ChecksumEngine.crunchChecksums"
    /// A mangled culprit is a `$s…` symbol containing the type's mangled identifier.
    static let mangledPart = "14ChecksumEngine"
    /// The culprit's source file, which a Swift file:line names.
    static let culpritFile = "Culprits.swift:"

    let names: String
    let location: String

    init(output: String) {
        let words = output.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" })
        if output.contains(Self.culprit) {
            names = "demangled"
        } else if words.contains(where: { $0.hasPrefix("$s") && $0.contains(Self.mangledPart) }) {
            names = "mangled"
        } else {
            names = "culprit not named"
        }
        location = Self.location(in: words)
    }

    /// `file:line:column`, `file:line` or `no Swift file:line`, by the first mention of the culprit's file.
    private static func location(in words: [Substring]) -> String {
        guard let word = words.first(where: { $0.contains(culpritFile) }) else { return "no Swift file:line" }
        let after = word[word.range(of: culpritFile)!.upperBound...]
        let numbers = after.split(separator: ":", omittingEmptySubsequences: false).prefix(2)
        return numbers.count == 2 && numbers.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isNumber) })
            ? "Swift file:line:column" : "Swift file:line"
    }
}

// "Did you mean ...?" for misspelt options and subcommands.

enum ArgumentSuggestions {
    /// The largest edit distance at which a known name still counts as what the user meant.
    static let maximumDistance = 2

    /// The candidate closest to `name`, if one is within ``maximumDistance`` edits.
    ///
    /// Ties go to the earlier candidate, so callers list the likelier names first.
    static func closest(to name: String, among candidates: [String]) -> String? {
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let distance = editDistance(name, candidate)
            if distance <= maximumDistance, distance < (best?.distance ?? .max) {
                best = (candidate, distance)
            }
        }
        return best?.candidate
    }

    /// The Levenshtein distance: single-character insertions, deletions and substitutions.
    static func editDistance(_ source: String, _ target: String) -> Int {
        let source = Array(source)
        let target = Array(target)
        var previous = Array(0...target.count)
        for (row, sourceCharacter) in source.enumerated() {
            var current = [row + 1]
            for (column, targetCharacter) in target.enumerated() {
                let substitution = previous[column] + (sourceCharacter == targetCharacter ? 0 : 1)
                current.append(min(substitution, previous[column + 1] + 1, current[column] + 1))
            }
            previous = current
        }
        return previous[target.count]
    }
}

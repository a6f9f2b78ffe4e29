// What each benchmark section reports: its tables, its fixed-format lines, and its checks against the issue's
// targets.

/// One measurement against one of the targets.
struct TargetCheck {
    let name: String
    let measured: String
    let target: String
    let met: Bool
    /// The target lies within the run-to-run spread of the measurement: the verdict could flip on a rerun.
    let withinNoise: Bool
    /// What limits the measurement when the target is missed; empty when met.
    let limit: String

    init(_ name: String, measured: String, target: String, met: Bool, withinNoise: Bool = false, limit: String = "") {
        self.name = name
        self.measured = measured
        self.target = target
        self.met = met
        self.withinNoise = withinNoise
        self.limit = limit
    }

    var verdict: String { (met ? "met" : "MISSED") + (withinNoise ? " (within noise)" : "") }
}

/// What one benchmark section hands the driver to print.
struct SectionReport {
    var tables: [ResultTable] = []
    var lines: [String] = []
    var targets: [TargetCheck] = []
}

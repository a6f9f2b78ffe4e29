import StallwatchAggregate

public struct HTMLExporter: StallExporter {
    public init() {}
    public func export(_ collection: StallCollection) -> [UInt8] { [] }
}

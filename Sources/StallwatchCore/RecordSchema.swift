// The version of stallwatch's JSON-lines records (docs/json-schema.md): one number for the writer and the reader.

/// The record schema's versions: what `run`, `attach` and `demo` write, and what `report` and `--baseline` read.
public enum RecordSchema {
    /// Written in every record's `schemaVersion`; raised when a record changes in a way an older reader would
    /// misread (a key added within a version is not such a change).
    public static let version = 3
    /// The oldest version `report` and `--baseline` read: version 1 had no fingerprints.
    public static let oldestReadable = 2
}

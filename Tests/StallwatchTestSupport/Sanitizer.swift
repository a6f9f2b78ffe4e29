// Whether the tests run under a sanitizer, which slows stallwatch's own threads several times over.
import Foundation

/// The sanitizer `Scripts/sanitize` runs this test process under (`STALLWATCH_TEST_SANITIZER`), if any.
///
/// Under it, stallwatch's sampling, detection and capture run several times slower on a machine whose cores the
/// sanitized collector keeps busy: how long it took to see something, and what a loaded machine's scheduler does to
/// other threads meanwhile, are not what the feature promises. Assertions on those belong to the plain run (and
/// `Scripts/bench`): a test checks them only when ``timingIsMeasurable``, and checks everything else either way.
public enum Sanitizer {
    public static let name = ProcessInfo.processInfo.environment["STALLWATCH_TEST_SANITIZER"].flatMap {
        $0.isEmpty ? nil : $0
    }

    /// False under a sanitizer: timing assertions are the plain run's.
    public static var timingIsMeasurable: Bool { name == nil }

    /// False under a sanitizer: AddressSanitizer's shadow memory and its quarantine of freed blocks (256 MiB by
    /// default) make a process's resident size the sanitizer's; memory bounds are the plain run's.
    public static var memoryIsMeasurable: Bool { name == nil }
}

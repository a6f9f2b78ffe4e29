// The one error the argument parser returns.

/// A command line stallwatch cannot accept.
///
/// ``HelpText/errorText(for:)`` renders it the way the entry point prints it to stderr before
/// exiting with ``ExitCode/usage``.
public struct UsageError: Error, Equatable, Sendable {
    /// What is wrong, in swift-argument-parser's wording, without the `Error: ` prefix.
    public var message: String
    /// The command whose usage line follows the message.
    public var topic: HelpTopic

    /// Creates a usage error.
    public init(message: String, topic: HelpTopic) {
        self.message = message
        self.topic = topic
    }
}

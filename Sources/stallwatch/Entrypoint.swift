// The stallwatch executable: everything lives in StallwatchCLI; this file only hands over and exits.
import Foundation
import StallwatchCLI

@main
struct Entrypoint {
    static func main() {
        exit(StallwatchCommand.main(arguments: Array(CommandLine.arguments.dropFirst())))
    }
}

// The stallwatch executable: everything lives in StallwatchCLI; this file only hands over and exits.
import FoundationEssentials
import Glibc
import StallwatchCLI

@main
struct Entrypoint {
    static func main() {
        exit(StallwatchCommand.main(arguments: Array(CommandLine.arguments.dropFirst())))
    }
}

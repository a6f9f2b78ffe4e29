// Placeholder until the benchmark driver lands.
@main
enum StallwatchBench {
    static func main() {}
}

// swift-tools-version:6.0
// A user's package for the library-mode test (Tests/EndToEndTests/LibraryModeTests.swift): it depends on stallwatch by
// path, links the StallwatchAgent library product and starts the monitor itself.
import PackageDescription

let package = Package(
    name: "LibraryUser",
    dependencies: [.package(name: "stallwatch", path: "../../..")],
    targets: [
        .target(name: "CLibraryUser"),
        .executableTarget(
            name: "LibraryUser",
            dependencies: ["CLibraryUser", .product(name: "StallwatchAgent", package: "stallwatch")]
        ),
    ]
)

// swift-tools-version:6.0
import PackageDescription

// The checks that a later language mode turns on: `any` spelled out for every existential,
// imports internal unless a file says `public import` (so the library's interface names only
// the modules its clients need), and members visible only through a module the file imports.
let upcomingFeatures: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "pinkeeper",
    products: [
        // What a local Swift process links to read the cache: no libcurl, no libsystemd.
        .library(name: "PinKeeper", targets: ["PinKeeper"]),
        .executable(name: "pinkeeper", targets: ["pinkeeper"]),
        // Benchmarks (scripts/bench.sh): not installed, not part of the product.
        .executable(name: "pinkeeper-bench", targets: ["PinKeeperBench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // libcurl's headers (libcurl4-openssl-dev), and the library loaded on the first fetch (dlopen).
        .target(name: "CCurl"),
        .systemLibrary(
            name: "CLibcrypto", pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]),
        .systemLibrary(
            name: "CLibssl", pkgConfig: "libssl",
            providers: [.apt(["libssl-dev"])]),
        .systemLibrary(
            name: "CSystemd", pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]),
        // glibc's <malloc.h> (mallopt, mallinfo2), which the Glibc module does not import.
        .systemLibrary(name: "CMalloc"),
        .target(name: "PinKeeper", dependencies: ["CLibcrypto"], swiftSettings: upcomingFeatures),
        .target(
            name: "PinKeeperDaemon",
            dependencies: [
                "PinKeeper", "CCurl", "CLibcrypto", "CLibssl", "CSystemd", "CMalloc",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: upcomingFeatures),
        .executableTarget(
            name: "pinkeeper",
            dependencies: [
                "PinKeeperDaemon",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: upcomingFeatures),
        .executableTarget(
            name: "PinKeeperBench",
            dependencies: ["PinKeeper", "PinKeeperDaemon", "CLibcrypto", .product(name: "Logging", package: "swift-log")],
            swiftSettings: upcomingFeatures),
        // What both test targets use: the package root, the test vectors, child processes.
        .target(name: "TestSupport", dependencies: ["PinKeeper"], path: "Tests/TestSupport", swiftSettings: upcomingFeatures),
        .testTarget(name: "PinKeeperTests", dependencies: ["PinKeeper", "TestSupport"], swiftSettings: upcomingFeatures),
        .testTarget(
            name: "PinKeeperDaemonTests",
            dependencies: ["PinKeeperDaemon", "pinkeeper", "TestSupport"],
            swiftSettings: upcomingFeatures),
    ],
    swiftLanguageModes: [.v6]
)

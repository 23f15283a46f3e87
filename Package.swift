// swift-tools-version:6.0
import PackageDescription

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
        .target(name: "PinKeeper", dependencies: ["CLibcrypto"]),
        .target(
            name: "PinKeeperDaemon",
            dependencies: [
                "PinKeeper", "CCurl", "CLibcrypto", "CLibssl", "CSystemd", "CMalloc",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .executableTarget(
            name: "pinkeeper",
            dependencies: [
                "PinKeeperDaemon",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        .executableTarget(
            name: "PinKeeperBench",
            dependencies: ["PinKeeper", "PinKeeperDaemon", "CLibcrypto", .product(name: "Logging", package: "swift-log")]),
        // What both test targets use: the package root, the test vectors, child processes.
        .target(name: "TestSupport", dependencies: ["PinKeeper"], path: "Tests/TestSupport"),
        .testTarget(name: "PinKeeperTests", dependencies: ["PinKeeper", "TestSupport"]),
        .testTarget(
            name: "PinKeeperDaemonTests",
            dependencies: ["PinKeeperDaemon", "pinkeeper", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)

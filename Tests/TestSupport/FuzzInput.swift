public import FoundationEssentials

/// How the fuzz target cuts one input into the parts it feeds (Tests/Fuzz/FuzzTarget.swift), in
/// one place: the fuzz build compiles this file into the target, and the regression tests
/// (FuzzRegressionTests) replay saved crashers through the same split.
public enum FuzzInput {
    /// Splits at the first `count - 1` newlines; the last part keeps any further newlines, and
    /// missing parts are empty.
    public static func split(_ data: Data, parts count: Int) -> [Data] {
        var parts: [Data] = []
        var rest = data[...]
        while parts.count < count - 1, let newline = rest.firstIndex(of: 0x0A) {
            parts.append(Data(rest[rest.startIndex..<newline]))
            rest = rest[rest.index(after: newline)...]
        }
        parts.append(Data(rest))
        while parts.count < count { parts.append(Data()) }
        return parts
    }
}

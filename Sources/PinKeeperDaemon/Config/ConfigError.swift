/// A configuration problem, told in one line that names the file, the store and the key.
public struct ConfigError: Error, CustomStringConvertible, Equatable {
    public var file: String
    public var store: String?
    public var key: String?
    public var problem: String

    public init(file: String, store: String? = nil, key: String? = nil, _ problem: String) {
        self.file = file
        self.store = store
        self.key = key
        self.problem = problem
    }

    public var description: String {
        var place = file
        if let store { place += ": store '\(store)'" }
        if let key { place += ": key '\(key)'" }
        return "\(place): \(problem)"
    }
}

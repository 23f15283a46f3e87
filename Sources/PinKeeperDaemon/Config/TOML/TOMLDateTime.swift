/// A TOML date, time or date-time, checked (month and day ranges with leap years, hours,
/// minutes, seconds) and kept as written: nothing in the configuration computes with dates.
struct TOMLDateTime: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        case offsetDateTime, localDateTime, localDate, localTime
    }

    let kind: Kind
    let text: String

    static func isLeapYear(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    static func days(inMonth month: Int, year: Int) -> Int {
        switch month {
        case 2: return isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}

extension TOMLCursor {
    private static func isDigit(_ byte: UInt8?) -> Bool { byte.map { $0 >= 0x30 && $0 <= 0x39 } ?? false }

    /// Whether a date (`dddd-`) or a time (`dd:`) starts here rather than a number.
    func startsDateOrTime() -> (date: Bool, time: Bool) {
        let digits = (0..<4).map { Self.isDigit(peek($0)) }
        let date = digits.allSatisfy { $0 } && peek(4) == UInt8(ascii: "-")
        let time = digits[0] && digits[1] && peek(2) == UInt8(ascii: ":")
        return (date, time)
    }

    /// A date, local date-time, offset date-time or local time starting here.
    mutating func dateTime() throws(TOMLError) -> TOMLDateTime {
        let start = offset
        if startsDateOrTime().time {
            try time()
            return TOMLDateTime(kind: .localTime, text: text(from: start))
        }
        let year = try number(digits: 4)
        try expect(UInt8(ascii: "-"), "a date is written YYYY-MM-DD")
        let month = try number(digits: 2)
        try expect(UInt8(ascii: "-"), "a date is written YYYY-MM-DD")
        let dayStart = offset
        let day = try number(digits: 2)
        guard (1...12).contains(month) else { throw error("month \(month) does not exist", at: start + 5) }
        guard day >= 1, day <= TOMLDateTime.days(inMonth: month, year: year) else {
            throw error("day \(day) does not exist in \(year)-\(month < 10 ? "0" : "")\(month)", at: dayStart)
        }
        // "T" (or "t") joins a time; so does one space, when a digit follows it.
        let joined =
            current == UInt8(ascii: "T") || current == UInt8(ascii: "t")
            || (current == UInt8(ascii: " ") && Self.isDigit(peek(1)))
        guard joined else { return TOMLDateTime(kind: .localDate, text: text(from: start)) }
        offset += 1
        try time()
        switch current {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            offset += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            offset += 1
            let hourStart = offset
            let hours = try number(digits: 2)
            try expect(UInt8(ascii: ":"), "a time offset is written +HH:MM or -HH:MM")
            let minutes = try number(digits: 2)
            guard hours <= 23, minutes <= 59 else { throw error("time offset out of range", at: hourStart) }
        default:
            return TOMLDateTime(kind: .localDateTime, text: text(from: start))
        }
        return TOMLDateTime(kind: .offsetDateTime, text: text(from: start))
    }

    /// HH:MM:SS with an optional fraction. A leap second (60) is refused: RFC 3339 allows it
    /// only where a leap second happened, which a local time cannot tell.
    private mutating func time() throws(TOMLError) {
        let start = offset
        let hours = try number(digits: 2)
        try expect(UInt8(ascii: ":"), "a time is written HH:MM:SS")
        let minutes = try number(digits: 2)
        try expect(UInt8(ascii: ":"), "a time is written HH:MM:SS (seconds are required)")
        let seconds = try number(digits: 2)
        guard hours <= 23, minutes <= 59, seconds <= 59 else { throw error("time out of range", at: start) }
        if current == UInt8(ascii: ".") {
            offset += 1
            guard Self.isDigit(current) else { throw error("expected digits after the decimal point of the seconds") }
            while Self.isDigit(current) { offset += 1 }
        }
    }

    private mutating func number(digits count: Int) throws(TOMLError) -> Int {
        var value = 0
        for _ in 0..<count {
            guard let byte = current, Self.isDigit(byte) else { throw error("expected a digit in the date or time") }
            value = value * 10 + Int(byte - 0x30)
            offset += 1
        }
        return value
    }

    private mutating func expect(_ byte: UInt8, _ reason: String) throws(TOMLError) {
        guard current == byte else { throw error(reason) }
        offset += 1
    }
}

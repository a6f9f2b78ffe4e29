// The records' wall-clock times: RFC 3339 UTC text to Unix milliseconds and back, without Foundation's formatters.
import StallwatchCore

/// RFC 3339 timestamps as stallwatch writes them (`2026-11-29T20:33:10.287Z`), as Unix milliseconds.
public enum RFC3339 {
    /// Unix milliseconds of `text`, or `nil` if it is not `YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM)`.
    public static func milliseconds(_ text: String) -> Double? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20 else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                guard bytes[index] >= 48, bytes[index] <= 57 else { return nil }
                value = value * 10 + Int(bytes[index] - 48)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var index = 19
        var fraction = 0.0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            var scale = 0.1
            while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                fraction += Double(bytes[index] - 48) * scale
                scale /= 10
                index += 1
            }
        }
        var offsetMinutes = 0
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"): break
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard index + 6 <= bytes.count, let hours = number(index + 1..<index + 3),
                let minutes = number(index + 4..<index + 6)
            else { return nil }
            offsetMinutes = (hours * 60 + minutes) * (bytes[index] == UInt8(ascii: "-") ? -1 : 1)
        default: return nil
        }
        let days = CivilCalendar.daysSinceEpoch(year: year, month: month, day: day)
        let seconds = Double(days * 86_400 + hour * 3600 + minute * 60 + second - offsetMinutes * 60)
        return ((seconds + fraction) * 1000).rounded()
    }

    /// `2026-11-29T20:33:10.287Z` for Unix milliseconds.
    public static func text(milliseconds: Double) -> String {
        let total = Int((milliseconds).rounded(.down))
        let millis = ((total % 1000) + 1000) % 1000
        let seconds = (total - millis) / 1000
        let secondOfDay = ((seconds % 86_400) + 86_400) % 86_400
        let (year, month, day) = CivilCalendar.date(daysSinceEpoch: (seconds - secondOfDay) / 86_400)
        func pad(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):"
            + "\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2)).\(pad(millis, 3))Z"
    }
}

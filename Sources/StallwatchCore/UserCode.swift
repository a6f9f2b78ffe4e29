// Which frames of the program's own image are code its author wrote: not witnesses, thunks, specializations of
// the standard library's generics, compiler-generated code, or runtime and Foundation code emitted into it.

/// Tells user-written frames from the rest of the program's own image, by the demangled name's kind and the
/// frame's source location.
///
/// The program's image holds more than its author's functions: protocol witnesses, thunks, outlined value
/// operations, specializations of standard-library generics (`specialized IndexingIterator.next()`), code the
/// compiler synthesized (`Item.init(from:)` at `<compiler-generated>`), and, in a `-static-stdlib` build, the
/// Swift runtime, Foundation and CoreFoundation themselves. Reports name the nearest user-written frame instead.
public enum UserCode {
    /// Demangled-name prefixes of code no one wrote by hand.
    static let generatedKinds = [
        "protocol witness for ", "thunk for ", "reabstraction thunk", "partial apply for thunk", "dispatch thunk of ",
        "outlined ", "value witness for ", "type metadata accessor for ", "type metadata completion function for ",
        "type metadata instantiation function for ", "lazy protocol witness table accessor for ",
        "associated type witness", "base conformance descriptor", "key path getter for ", "key path setter for ",
        "key path equality", "key path hash", "method descriptor for ", "merged protocol witness", "@objc ",
        "__swift", "swift::", "_swift_", "swift_", "std::", "__gnu_cxx::", "__cxx", "_Unwind_", "__gxx",
    ]

    /// C names of the Swift runtime, CoreFoundation, Foundation and libdispatch, when linked into the program.
    static let runtimeCPrefixes = [
        "__CF", "_CF", "CFRunLoop", "CFArray", "CFDictionary", "CFString", "CFRelease", "CFRetain", "_dispatch_",
        "dispatch_", "__NS", "_NS", "_objc_", "swift_", "_swift", "__swift", "_Block_",
    ]

    /// Types and protocols of the standard library, Foundation and Dispatch whose code (specialized or inlined
    /// into the program) is not the program's.
    static let libraryTypes: Set<String> = [
        "Array", "ArraySlice", "ContiguousArray", "Dictionary", "Set", "String", "Substring", "Character",
        "Sequence", "Collection", "BidirectionalCollection", "RandomAccessCollection", "MutableCollection",
        "RangeReplaceableCollection", "IteratorProtocol", "IndexingIterator", "Range", "ClosedRange", "Optional",
        "Result", "Slice", "LazySequence", "LazyMapSequence", "LazyFilterSequence", "EnumeratedSequence",
        "Zip2Sequence", "FlattenSequence", "ReversedCollection", "DefaultIndices", "CollectionOfOne",
        "EmptyCollection", "Repeated", "StrideTo", "StrideThrough", "UnsafePointer", "UnsafeMutablePointer",
        "UnsafeRawPointer", "UnsafeMutableRawPointer", "UnsafeBufferPointer", "UnsafeMutableBufferPointer",
        "UnsafeRawBufferPointer", "UnsafeMutableRawBufferPointer", "ManagedBuffer", "Unmanaged", "Int", "Int8",
        "Int16", "Int32", "Int64", "UInt", "UInt8", "UInt16", "UInt32", "UInt64", "Double", "Float", "Bool",
        "FixedWidthInteger", "BinaryInteger", "SignedInteger", "UnsignedInteger", "Numeric", "SignedNumeric",
        "AdditiveArithmetic", "BinaryFloatingPoint", "FloatingPoint", "Comparable", "Equatable", "Hashable",
        "Hasher", "Strideable", "StringProtocol", "Encodable", "Decodable", "Encoder", "Decoder",
        "KeyedEncodingContainer", "KeyedDecodingContainer", "UnkeyedEncodingContainer", "UnkeyedDecodingContainer",
        "SingleValueEncodingContainer", "SingleValueDecodingContainer", "CodingKey", "Error", "Task",
        "TaskGroup", "ThrowingTaskGroup", "CheckedContinuation", "UnsafeContinuation", "AsyncStream",
        "AsyncThrowingStream", "AsyncSequence", "AsyncIteratorProtocol", "MainActor", "Actor", "Duration",
        "ContinuousClock", "SuspendingClock", "Atomic", "Mutex", "JSONDecoder", "JSONEncoder",
        "PropertyListDecoder", "PropertyListEncoder", "Data", "Date", "URL", "UUID", "FileManager", "FileHandle",
        "ProcessInfo", "RunLoop", "Thread", "Timer", "NotificationCenter", "OperationQueue", "DispatchQueue",
        "DispatchGroup", "DispatchSemaphore", "DispatchWorkItem", "NSLock", "NSRecursiveLock", "NSCondition",
        "NSString", "NSArray", "NSDictionary", "NSObject", "NSNumber", "NSData", "JSONSerialization",
        "DateFormatter", "NumberFormatter", "Calendar", "Locale", "TimeZone", "CharacterSet", "Scanner",
        "AttributedString", "Decimal", "IndexSet", "IndexPath",
        // Module names, which lead names the demangler did not simplify (`Swift.Array.append(_:)`).
        "Swift", "Foundation", "FoundationEssentials", "FoundationInternationalization", "Dispatch", "_Concurrency",
        "CoreFoundation", "_StringProcessing", "Synchronization",
    ]

    /// Source paths of code that comes with the toolchain, not with the program.
    static let toolchainSourceMarkers = [
        "/swift/stdlib/", "/swift-corelibs-", "/swift-foundation/", "/swift-collections/", ".swiftinterface",
        "/usr/lib/swift/", "/lib/swift/linux/", "/CoreFoundation/", "/Sources/Foundation",
    ]

    /// Whether `frame` is code the program's author wrote (it is in the program's own image: see
    /// ``ImageClassifier/isApplicationFrame(_:)``).
    public static func isUserWritten(_ frame: Frame) -> Bool {
        guard ImageClassifier.isApplicationFrame(frame), let symbol = frame.symbol else { return false }
        return isUserWritten(symbol: symbol, file: frame.file, line: frame.line)
    }

    /// The rules over a demangled name and its source location (nil where the image has no debug info).
    public static func isUserWritten(symbol: String, file: String?, line: Int?) -> Bool {
        // A resume partial function is its async function's code (a thunk's is a thunk's).
        let symbol = AsyncFunction.logicalName(symbol)
        if generatedKinds.contains(where: symbol.hasPrefix) { return false }
        if let file {
            if file == "<compiler-generated>" || line == 0 { return false }
            if toolchainSourceMarkers.contains(where: file.contains) { return false }
        }
        // C and C++ names from the program's own symbol table (an interpreter's, a C program's) are its code, but
        // for the runtime's, CoreFoundation's and libdispatch's, linked in by `-static-stdlib`.
        guard isSwiftName(symbol) else { return !runtimeCPrefixes.contains(where: symbol.hasPrefix) }
        let subject = subjectType(of: symbol)
        let specialized = symbol.hasPrefix("specialized ") || symbol.hasPrefix("generic specialization ")
        // A specialization is the library's when its generic is; without debug info, so is library code inlined
        // or emitted into the program (a user's own extension of `Array` keeps its source file, checked above).
        if libraryTypes.contains(subject) || subject.hasPrefix("_") { return file != nil && !specialized }
        return true
    }

    /// Whether a demangled name is Swift's (`Type.method(label:)`, `closure #1 in f()`), not a C function's.
    static func isSwiftName(_ symbol: String) -> Bool {
        !symbol.contains("::") && (symbol.contains("(") || symbol.contains(" ") || symbol.contains("."))
    }

    /// The type (or free function) a Swift name belongs to, past its qualifiers: `Collection` for
    /// `specialized Collection.map<A>(_:)`, `App` for `closure #1 in static App.main()`.
    static func subjectType(of symbol: String) -> String {
        var rest = Substring(symbol)
        let qualifiers = [
            "specialized ", "static ", "merged ", "closure #", "implicit closure #", "generic specialization <",
            "partial apply for ", "(", "one-time initialization function for ", "default argument ",
            "variable initialization expression of ", "suspend resume partial function for ",
            "await resume partial function for ", "async function pointer to ", "function signature specialization <",
        ]
        var changed = true
        while changed {
            changed = false
            for qualifier in qualifiers where rest.hasPrefix(qualifier) {
                changed = true
                switch qualifier {
                case "closure #", "implicit closure #", "default argument ":
                    // `closure #2 in `: up to the enclosing function's name.
                    if let range = rest.firstRange(of: " in ") { rest = rest[range.upperBound...] } else { return "" }
                case "generic specialization <", "function signature specialization <":
                    if let range = rest.firstRange(of: "> of ") { rest = rest[range.upperBound...] } else { return "" }
                case "(":
                    // `(3) suspend resume partial function for f()`.
                    if let close = rest.firstIndex(of: ")") {
                        rest = rest[rest.index(after: close)...].drop { $0 == " " }
                    }
                default:
                    rest = rest.dropFirst(qualifier.count)
                }
            }
        }
        let end = rest.firstIndex { $0 == "." || $0 == "(" || $0 == "<" || $0 == " " } ?? rest.endIndex
        return String(rest[..<end])
    }
}

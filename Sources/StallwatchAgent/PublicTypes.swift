@_exported import enum StallwatchCore.CaptureMethod
// The types of the library API that live in StallwatchCore, visible to an app that imports StallwatchAgent alone
// (the rest of Core is the agent's business).
@_exported import struct StallwatchCore.Frame
@_exported import enum StallwatchCore.LoopPhase
@_exported import struct StallwatchCore.RateLimit
@_exported import struct StallwatchCore.Sample
@_exported import struct StallwatchCore.StackTruncation
@_exported import struct StallwatchCore.StallReport
@_exported import struct StallwatchCore.ThreadActivity
@_exported import struct StallwatchCore.ThreadState
@_exported import enum StallwatchCore.WatchStrategy

// What both stack captures (the agent's in-process one and the collector's ptrace one) and the Swift that reads their
// stacks agree on: how many frames an in-process capture keeps, and how a Swift async frame is recognised.
#ifndef SW_CAPTURE_RULES_H
#define SW_CAPTURE_RULES_H

#include "sw_loop_phase.h"

/// The most frames an in-process capture keeps (`WatchSettings.inProcessFrameLimit`): its stack must fit one
/// message to the collector beside the image map.
#define SW_IN_PROCESS_MAX_FRAMES 512

/// Whether a frame whose frame pointer is `fp`, stack pointer `sp` and canonical frame address `cfa` (its caller's
/// stack pointer; 0 where the walk ends) holds a Swift async frame record, whose word below the frame pointer is the
/// function's async context. swiftc emits the record on Linux without the flag bit Darwin sets in the saved frame
/// pointer, so it is known by its shape: the frame pointer 16 bytes below the CFA, the context's slot inside the
/// frame.
SW_MODEL_INLINE int sw_has_async_frame_record(uint64_t fp, uint64_t sp, uint64_t cfa) {
    return cfa >= 24 && fp == cfa - 16 && fp - 8 >= sp;
}

/// Where that word lies.
SW_MODEL_INLINE uint64_t sw_async_context_slot(uint64_t fp) { return fp - 8; }

#endif

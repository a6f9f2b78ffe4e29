// The loop model: what a watched event loop's state is and how it is published, defined once, in C, for both
// languages. The agent's C publishes on the watched thread, where only C may run and every transition must cost a
// handful of instructions with no call, so the definitions live where that C can inline them; StallwatchCore reads
// each from here (as swift-system reads errno values), never typing a number again, and one table test per
// definition checks the Swift view against it.
#ifndef C_STALLWATCH_LOOP_MODEL_H
#define C_STALLWATCH_LOOP_MODEL_H

#include "sw_capture_rules.h"
#include "sw_latency_histogram.h"
#include "sw_loop_activity.h"
#include "sw_loop_phase.h"
#include "sw_nested_run.h"
#include "sw_packed_activity.h"
#include "sw_run_loop_nesting.h"

#endif

// The agent's C half: what runs inside the workload where Swift cannot or must not. A load-time hook, stand-ins that
// stand in front of other libraries' functions (CoreFoundation's run loop, libdispatch) and hand on to named hooks,
// the activity boards watched threads publish to with no call, and in-process capture from a signal handler. Swift
// cannot define a C symbol of a given name, run code at load or thread exit, or run in a signal handler; and on a
// watched thread only C runs, so that no Swift runtime call (exclusivity checks, retains, lazy globals) gets onto its
// per-transition path. Only plain C types cross these headers, one per subsystem.
#ifndef C_STALLWATCH_AGENT_SUPPORT_H
#define C_STALLWATCH_AGENT_SUPPORT_H

#include "sw_activity_board.h"
#include "sw_agent_process.h"
#include "sw_executor_jobs.h"
#include "sw_loop_threads.h"
#include "sw_main_loop.h"
#include "sw_program_libraries.h"
#include "sw_signal_capture.h"

#endif

// The model is all inline (include/sw_run_loop_nesting.h); a C target needs one source file.
#include "sw_run_loop_nesting.h"

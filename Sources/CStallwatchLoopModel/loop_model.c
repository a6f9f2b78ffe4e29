// The model is all inline (include/); a C target needs one source file.
#include "CStallwatchLoopModel.h"

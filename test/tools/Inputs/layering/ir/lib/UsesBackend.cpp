#include "kiln/Backends/Passes.h"

#include "kiln/Compiler/Driver.h"

#include "../common/Shared.h"

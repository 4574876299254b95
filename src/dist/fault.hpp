// Injected faults, to test that a failed rank never hangs the job: UB_FAULT="RANK:POINT[:HOW]"
// makes rank RANK fail when it reaches the point named POINT, by HOW: `throw` (the default: an
// error, as a failed call would raise), `exit` (exit code 1 at once, nothing cleaned up), `kill`
// (SIGKILL to itself) or `hang` (stop answering: sleep forever). Points are named where the code
// calls fault_point (e.g. "rendezvous", "nccl_init", "first_collective", "measure").
#pragma once

namespace ub::dist {

void fault_point(const char* point, int rank);

}  // namespace ub::dist

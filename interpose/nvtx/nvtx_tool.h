// libgpumemtrace.so as an NVTX tool: the program's NVTX ranges become phase records.
#pragma once

namespace gpumemtrace::interpose::nvtx {

// Points NVTX_INJECTION64_PATH at this library when no other tool has it (library constructor), so that
// NVTX3's first call loads it and calls InitializeInjectionNvtx2.
void claim_injection();

}  // namespace gpumemtrace::interpose::nvtx

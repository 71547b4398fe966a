// NVTX messages as UTF-8 text, for the NVTX tool's modules (nvtx_tool.cpp, nvtx_mem_tool.cpp). Include after
// <nvtx3/nvToolsExt.h> (with NVTX_NO_IMPL: the tool is not an NVTX client).
#pragma once

#include <cstdint>
#include <string>

namespace gpumemtrace::interpose::nvtx {

// The text of an NVTX message of `type` (nvtxMessageType_t): ASCII, wide or a registered string; empty for
// any other type.
std::string message_text(int32_t type, const nvtxMessageValue_t& message);

}  // namespace gpumemtrace::interpose::nvtx

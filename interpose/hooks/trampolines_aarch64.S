// dlsym(handle, name) and dlopen(file, mode): ask the route (gmt_dlsym_route, gmt_dlopen_route) for the
// target, then tail-branch to it with the caller's arguments and return address intact (see dlsym_hook.cpp
// for why).
.macro routed name, route
    .globl  \name
    .type   \name, %function
\name:
    .cfi_startproc
    stp     x29, x30, [sp, #-32]!
    .cfi_def_cfa_offset 32
    .cfi_offset 29, -32
    .cfi_offset 30, -24
    mov     x29, sp
    stp     x0, x1, [sp, #16]
    bl      \route
    mov     x16, x0
    ldp     x0, x1, [sp, #16]
    ldp     x29, x30, [sp], #32
    .cfi_def_cfa_offset 0
    br      x16
    .cfi_endproc
    .size   \name, .-\name
.endm

    .text
    routed  gmt_dlsym_entry, gmt_dlsym_route
    routed  gmt_dlopen_entry, gmt_dlopen_route
// Exported under glibc's versions of the names (exports.map): the default one for every caller, the older
// one for programs linked before glibc 2.34, and either found by dlvsym(RTLD_NEXT, "dlsym", version).
    .symver gmt_dlsym_entry, dlsym@@GLIBC_2.34
    .symver gmt_dlsym_entry, dlsym@GLIBC_2.17
    .symver gmt_dlopen_entry, dlopen@@GLIBC_2.34
    .symver gmt_dlopen_entry, dlopen@GLIBC_2.17
    .section .note.GNU-stack,"",@progbits

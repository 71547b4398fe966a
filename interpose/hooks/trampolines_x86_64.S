// dlsym(handle, name) and dlopen(file, mode): ask the route (gmt_dlsym_route, gmt_dlopen_route) for the
// target, then tail-jump to it with the caller's arguments and return address intact (see dlsym_hook.cpp
// for why).
.macro routed name, route
    .globl  \name
    .type   \name, @function
\name:
    .cfi_startproc
    pushq   %rdi
    .cfi_adjust_cfa_offset 8
    pushq   %rsi
    .cfi_adjust_cfa_offset 8
    subq    $8, %rsp                 // keep the stack 16-byte aligned at the call
    .cfi_adjust_cfa_offset 8
    call    \route
    addq    $8, %rsp
    .cfi_adjust_cfa_offset -8
    popq    %rsi
    .cfi_adjust_cfa_offset -8
    popq    %rdi
    .cfi_adjust_cfa_offset -8
    jmp     *%rax
    .cfi_endproc
    .size   \name, .-\name
.endm

    .text
    routed  gmt_dlsym_entry, gmt_dlsym_route
    routed  gmt_dlopen_entry, gmt_dlopen_route
// Exported under glibc's versions of the names (exports.map): the default one for every caller, the older
// one for programs linked before glibc 2.34, and either found by dlvsym(RTLD_NEXT, "dlsym", version).
    .symver gmt_dlsym_entry, dlsym@@GLIBC_2.34
    .symver gmt_dlsym_entry, dlsym@GLIBC_2.2.5
    .symver gmt_dlopen_entry, dlopen@@GLIBC_2.34
    .symver gmt_dlopen_entry, dlopen@GLIBC_2.2.5
    .section .note.GNU-stack,"",@progbits

// dlsym(handle, name): ask gmt_dlsym_route for the target, then tail-branch to it with the caller's
// arguments and return address intact (see dlsym_hook.cpp for why).
    .text
    .globl  dlsym
    .type   dlsym, %function
dlsym:
    .cfi_startproc
    stp     x29, x30, [sp, #-32]!
    .cfi_def_cfa_offset 32
    .cfi_offset 29, -32
    .cfi_offset 30, -24
    mov     x29, sp
    stp     x0, x1, [sp, #16]
    bl      gmt_dlsym_route
    mov     x16, x0
    ldp     x0, x1, [sp, #16]
    ldp     x29, x30, [sp], #32
    .cfi_def_cfa_offset 0
    br      x16
    .cfi_endproc
    .size   dlsym, .-dlsym
    .section .note.GNU-stack,"",@progbits

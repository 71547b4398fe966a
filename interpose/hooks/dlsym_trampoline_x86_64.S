// dlsym(handle, name): ask gmt_dlsym_route for the target, then tail-jump to it with the caller's
// arguments and return address intact (see dlsym_hook.cpp for why).
    .text
    .globl  dlsym
    .type   dlsym, @function
dlsym:
    .cfi_startproc
    pushq   %rdi
    .cfi_adjust_cfa_offset 8
    pushq   %rsi
    .cfi_adjust_cfa_offset 8
    subq    $8, %rsp                 // keep the stack 16-byte aligned at the call
    .cfi_adjust_cfa_offset 8
    call    gmt_dlsym_route
    addq    $8, %rsp
    .cfi_adjust_cfa_offset -8
    popq    %rsi
    .cfi_adjust_cfa_offset -8
    popq    %rdi
    .cfi_adjust_cfa_offset -8
    jmp     *%rax
    .cfi_endproc
    .size   dlsym, .-dlsym
    .section .note.GNU-stack,"",@progbits

#!/usr/bin/env python3
"""What tests/tamper_proc.t does to its own agent, one call per process:
prints this process's pid and the call's return value (-errno when it
failed), so the test can find the tamper record that names it.

  tamper_peer.py seize TID          ptrace(PTRACE_SEIZE), then exit (detaches;
                                    a seized thread is not stopped)
  tamper_peer.py attach PID         ptrace(PTRACE_ATTACH) (run it unprivileged:
                                    refused, the agent is never stopped)
  tamper_peer.py vm_readv PID       process_vm_readv of 8 bytes of its stack
  tamper_peer.py vm_writev PID      process_vm_writev to address 8 (never
                                    mapped: EFAULT, nothing is written)
  tamper_peer.py pidfd_getfd PID    pidfd_getfd of its fd 0
"""
import ctypes
import os
import sys

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
SYS_PTRACE, SYS_VM_READV, SYS_VM_WRITEV, SYS_PIDFD_OPEN, SYS_PIDFD_GETFD = 101, 310, 311, 434, 438
PTRACE_ATTACH, PTRACE_SEIZE = 16, 0x4206


class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


def call(nr, *args):
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    return -ctypes.get_errno() if r < 0 else r


def stack_address(pid):
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            if line.rstrip().endswith("[stack]"):
                return int(line.split("-")[0], 16)
    raise SystemExit("no stack in maps")


def vm(nr, pid, remote):
    buf = ctypes.create_string_buffer(8)
    local = iovec(ctypes.addressof(buf), 8)
    far = iovec(remote, 8)
    return call(nr, pid, ctypes.addressof(local), 1, ctypes.addressof(far), 1, 0)


verb, target = sys.argv[1], int(sys.argv[2])
if verb == "seize":
    ret = call(SYS_PTRACE, PTRACE_SEIZE, target, 0, 0)
elif verb == "attach":
    ret = call(SYS_PTRACE, PTRACE_ATTACH, target, 0, 0)
elif verb == "vm_readv":
    ret = vm(SYS_VM_READV, target, stack_address(target))
elif verb == "vm_writev":
    ret = vm(SYS_VM_WRITEV, target, 8)
elif verb == "pidfd_getfd":
    pidfd = call(SYS_PIDFD_OPEN, target, 0)
    ret = call(SYS_PIDFD_GETFD, pidfd, 0, 0) if pidfd >= 0 else pidfd
else:
    raise SystemExit(f"unknown verb {verb}")
print(os.getpid(), ret, flush=True)

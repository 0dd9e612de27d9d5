#!/usr/bin/env python3
# slice.py MS CMD...: exec CMD with a requested EEVDF slice of MS ms (sched_setattr sched_runtime)
import ctypes, os, sys, struct
ms = float(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)
attr = struct.pack("IIQiIQQQII", 56, 0, 0, 0, 0, int(ms * 1e6), 0, 0, 0, 0)
buf = ctypes.create_string_buffer(attr, 56)
r = libc.syscall(314, 0, buf, 0)
if r != 0:
    e = ctypes.get_errno(); print("sched_setattr:", os.strerror(e), file=sys.stderr); sys.exit(1)
os.execvp(sys.argv[2], sys.argv[2:])

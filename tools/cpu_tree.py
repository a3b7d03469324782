#!/usr/bin/env python3
"""CPU time of a command and of every process it starts, Chromium's included.

    python3 tools/cpu_tree.py OUTPUT_FILE COMMAND [ARG...]

prints "wall-seconds user-seconds system-seconds exit-code" and writes the command's output to OUTPUT_FILE.
/usr/bin/time counts only what the command's chain of parents waited for; a process whose parent ended first
(some of Chromium's, when playwright closes the browser) is reaped by init and its CPU is lost. Here this
process is the child subreaper of the tree: every orphan is handed to it, reaped as soon as it ends (so that a
test looking for what is left running finds no zombies) and counted in RUSAGE_CHILDREN. Linux only.
"""
import ctypes
import os
import resource
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
began = time.time()
with open(sys.argv[1], 'w') as out:
    child = subprocess.Popen(sys.argv[2:], stdout=out, stderr=subprocess.STDOUT)
code = None
while code is None:
    pid, status = os.wait()
    if pid == child.pid:
        code = os.waitstatus_to_exitcode(status)
wall = time.time() - began
# What the command left behind is given 15 s to end and be counted.
deadline = time.time() + 15
while time.time() < deadline:
    try:
        if os.waitpid(-1, os.WNOHANG)[0] == 0:
            time.sleep(0.1)
    except ChildProcessError:
        break
used = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f'{wall:.2f} {used.ru_utime:.2f} {used.ru_stime:.2f} {code}')

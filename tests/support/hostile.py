"""Hostile programs of issue 19, as Python source, for the sandbox tests.

Each reads its arguments as JSON from ``sys.argv[1]`` (``{"marker": ..., "outside":
[...], "port": ...}``; ``READ_ENVIRON`` needs none) and prints one JSON line
reporting what it managed.
Everything they start carries ``marker`` in its command line, so a test can
look for survivors in the host's ``/proc``; the fork bomb stops at 500 attempts.
"""

from __future__ import annotations

from pathlib import Path

# Read every /proc/<pid>/environ visible, and walk up the parent chain: the
# pipeline's start-up environment is where its API key is.
READ_ENVIRON = r'''
import json, os, sys
found, readable, visible = [], 0, 0
for name in os.listdir("/proc"):
    if not name.isdigit():
        continue
    visible += 1
    try:
        data = open(f"/proc/{name}/environ", "rb").read()
    except OSError:
        continue
    readable += 1
    for item in data.split(b"\0"):
        if b"sk-" in item or b"KEY=" in item:
            found.append(item.decode(errors="replace"))
chain, pid = [], os.getpid()
while pid > 1 and len(chain) < 20:
    try:
        status = open(f"/proc/{pid}/status").read()
        pid = int(status.split("PPid:")[1].split()[0])
    except (OSError, IndexError, ValueError):
        break
    chain.append(pid)
print(json.dumps({"found": sorted(set(found)), "readable": readable, "visible": visible, "ppid": os.getppid(),
                  "chain": chain}))
'''

# A child that leaves the session, the directory and the environment, then execs.
ESCAPE = r'''
import json, os, sys
args = json.loads(sys.argv[1])
pid = os.fork()
if pid == 0:
    os.setsid()
    os.chdir("/")
    sleep = "/usr/bin/sleep" if os.path.exists("/usr/bin/sleep") else "/bin/sleep"
    os.execve(sleep, [sleep, args["marker"]], {})
print(json.dumps({"child": pid}))
'''

# Up to 500 attempts at starting a process; reports how many ran at once.
FORK_BOMB = r'''
import json, os, subprocess, sys
args = json.loads(sys.argv[1])
sleep = "/usr/bin/sleep" if os.path.exists("/usr/bin/sleep") else "/bin/sleep"
started, errors = [], []
for _ in range(500):
    try:
        started.append(subprocess.Popen([sleep, args["marker"]], stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    except OSError as exc:
        errors.append(type(exc).__name__ + ": " + str(exc)[:60])
print(json.dumps({"started": len(started), "failed": len(errors), "first_error": errors[:1]}))
'''

# Writes to every path in "outside", and a connection to 127.0.0.1:port.
WRITE_AND_CONNECT = r'''
import json, os, socket, sys
args = json.loads(sys.argv[1])
report = {"written": [], "refused": []}
for path in args["outside"]:
    try:
        with open(path, "w") as f:
            f.write("escaped")
        report["written"].append(path)
    except OSError as exc:
        report["refused"].append(path + ": " + type(exc).__name__)
try:
    s = socket.create_connection(("127.0.0.1", args["port"]), timeout=3)
    s.sendall(b"hello")
    s.close()
    report["network"] = "connected"
except OSError as exc:
    report["network"] = type(exc).__name__ + ": " + str(exc)[:80]
print(json.dumps(report))
'''


def survivors(marker: str) -> list[int]:
    """Live (non-zombie) processes on the host whose command line holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker.encode() not in (entry / "cmdline").read_bytes():
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        if state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


def survivors_after(marker: str, grace_s: float = 10.0) -> list[int]:
    """``survivors`` once SIGKILLed processes had a moment to exit (a PID namespace is torn down
    asynchronously); returns early as soon as none is left, so it never slows a passing test."""
    import time

    deadline = time.monotonic() + grace_s
    left = survivors(marker)
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = survivors(marker)
    return left

"""Start one untrusted program in new namespaces (the ``namespaces`` level).

Run as a script by ``eval_pipelines.run.sandbox.runner`` -- ``python -I -S
launcher.py CONFIG_JSON`` -- never imported by the pipeline, so it uses
the standard library only. Bubblewrap is not needed; the kernel features are
reached through ``ctypes``.

What it does, in order:

1. ``unshare`` new mount, PID, IPC, UTS and (unless the target asked for the
   network) network namespaces, whose loopback is brought up (its only device);
   when not root, first a user namespace in which the caller is root (the
   kernel must allow unprivileged user namespaces).
2. ``fork``: the child is PID 1 of the new PID namespace. This process stays
   outside, waits for it and exits with its status; when this process is
   killed, the child gets SIGKILL (``PR_SET_PDEATHSIG``), and when PID 1 of a
   namespace dies the kernel kills every process in it -- nothing the program
   started can outlive the run, whatever it does (``setsid``, ``chdir /``, an
   empty environment).
3. In the child: a new root on a tmpfs holding read-only binds of the system
   directories, the Python installation and the program, the run's directory
   (and any extra writable folders) read-write, a fresh ``/proc`` (this
   namespace's processes only: the pipeline's ``/proc/<pid>/environ`` is not
   there), a minimal ``/dev``, a private ``/tmp``; ``pivot_root`` into it and
   the old root detached.
4. Drop privileges: as root, to a uid and gid of their own (``setgroups([])``,
   ``setgid``, ``setuid``), so ``RLIMIT_NPROC`` binds and every file of the
   host that is not world-readable stays closed; in a user namespace, by
   emptying the capability bounding set. ``PR_SET_NO_NEW_PRIVS`` in both.
5. Set the resource limits and ``exec`` the program.

A failure before ``exec`` is printed to stderr after ``SETUP_ERROR`` and the
exit status is ``SETUP_EXIT``.
"""

import ctypes
import json
import os
import platform
import signal
import sys

SETUP_ERROR = "eval-sandbox-setup-error: "
SETUP_EXIT = 125

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MS_NOATIME, MS_NODIRATIME, MS_RELATIME = 1024, 2048, 1 << 21
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 1, 4, 24, 38
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "arm64": 41}
# statvfs flags -> mount flags, to keep (in a user namespace: locked) flags on a read-only remount.
ST_TO_MS = ((1, MS_NOSUID), (2, MS_NOSUID), (4, MS_NODEV), (8, MS_NOEXEC),
            (1024, MS_NOATIME), (2048, MS_NODIRATIME), (4096, MS_RELATIME))
DEVICES = ("null", "zero", "full", "random", "urandom")

_libc = ctypes.CDLL(None, use_errno=True)


def _check(result, what):
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def mount(source, target, fstype, flags, data=None):
    _check(_libc.mount(source and source.encode(), target.encode(), fstype and fstype.encode(),
                       ctypes.c_ulong(flags), data and data.encode()), f"mount {target}")


def write_file(path, text):
    with open(path, "w") as f:
        f.write(text)


def enter_user_namespace(uid, gid):
    """Map the caller to root in a new user namespace (the unprivileged case)."""
    write_file("/proc/self/setgroups", "deny")
    write_file("/proc/self/uid_map", f"0 {uid} 1")
    write_file("/proc/self/gid_map", f"0 {gid} 1")


def _keep_flags(path):
    kept = 0
    flags = os.statvfs(path).f_flag
    for st, ms in ST_TO_MS[1:]:
        if flags & st:
            kept |= ms
    return kept


def bind(root, path, writable):
    inside = root + path
    if os.path.isdir(path):
        os.makedirs(inside, mode=0o755, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(inside), mode=0o755, exist_ok=True)
        if not os.path.exists(inside):
            open(inside, "w").close()
    mount(path, inside, None, MS_BIND | MS_REC)
    if not writable:
        mount(None, inside, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | _keep_flags(path))


def build_root(config):
    root = config["root"]
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=4m")
    for link, target in config["symlinks"]:
        os.makedirs(os.path.dirname(root + link), mode=0o755, exist_ok=True)
        os.symlink(target, root + link)
    # A private, size-bounded /tmp first: the run's directory may be under /tmp.
    os.makedirs(root + "/tmp", mode=0o755)
    mount("tmpfs", root + "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777,size={config['tmp_bytes']}")
    for path in config["ro_binds"]:
        if os.path.exists(path):
            bind(root, path, writable=False)
    for path in config["rw_binds"]:
        bind(root, path, writable=True)
    os.makedirs(root + "/proc", mode=0o755)
    os.makedirs(root + "/dev", mode=0o755)
    mount("tmpfs", root + "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k")
    os.makedirs(root + "/dev/shm", mode=0o755)
    mount("tmpfs", root + "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777,size={config['tmp_bytes']}")
    mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    for name in DEVICES:
        open(f"{root}/dev/{name}", "w").close()
        mount(f"/dev/{name}", f"{root}/dev/{name}", None, MS_BIND)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        os.symlink(target, f"{root}/dev/{name}")
    mount(None, root, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chdir(root)
    number = SYS_PIVOT_ROOT.get(platform.machine())
    if number is None:
        raise OSError(0, f"pivot_root: unknown architecture {platform.machine()}")
    _check(_libc.syscall(number, b".", b"."), "pivot_root")
    _check(_libc.umount2(b".", MNT_DETACH), "detach the old root")
    os.chdir("/")


def drop_privileges(config):
    if config["uid"] is not None:
        os.setgroups([])
        os.setgid(config["gid"])
        os.setuid(config["uid"])
    else:  # a user namespace: uid 0 in it, so empty the bounding set (exec then grants nothing)
        for cap in range(64):
            if _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
                break
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")


def child(config):
    import resource

    build_root(config)
    drop_privileges(config)
    os.umask(0o002)
    os.chdir(config["cwd"])
    for res, soft, hard in config["rlimits"]:
        try:
            resource.setrlimit(res, (soft, hard))
        except (ValueError, OSError):
            pass
    # Set last: the kernel clears the parent-death signal when credentials change.
    _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "pdeathsig")
    try:
        os.execve(config["argv"][0], config["argv"], config["env"])
    except OSError as exc:
        os.write(2, f"{SETUP_ERROR}cannot start {config['argv'][0]!r}: {exc.strerror}\n".encode())
        os._exit(127)


def loopback_up():
    """Bring up ``lo`` of the new network namespace (down when created; bubblewrap brings it up
    too): the program can then reach servers it starts itself on 127.0.0.1 -- a traced script
    provider's OTLP receiver -- and nothing else. Best effort: without it only loopback fails."""
    import fcntl
    import socket
    import struct

    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            got = fcntl.ioctl(sock, siocgifflags, struct.pack("16sH14s", b"lo", 0, b""))
            flags = struct.unpack("16sH14s", got)[1]
            fcntl.ioctl(sock, siocsifflags, struct.pack("16sH14s", b"lo", flags | iff_up, b""))
    except OSError:
        pass


def main():
    config = json.loads(sys.argv[1])
    uid, gid = os.getuid(), os.getgid()
    flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS
    if not config["network"]:
        flags |= CLONE_NEWNET
    try:
        if config["user_namespace"]:
            _check(_libc.unshare(CLONE_NEWUSER), "unshare(user namespace)")
            enter_user_namespace(uid, gid)
        _check(_libc.unshare(flags), "unshare")
        if flags & CLONE_NEWNET:
            loopback_up()
    except OSError as exc:
        os.write(2, f"{SETUP_ERROR}{exc.strerror}\n".encode())
        return SETUP_EXIT
    pid = os.fork()
    if pid == 0:
        try:
            child(config)
        except BaseException as exc:  # report any setup failure, never run the program half-isolated
            os.write(2, f"{SETUP_ERROR}{exc}\n".encode())
        os._exit(SETUP_EXIT)
    # Only the sandbox holds the pipes: end of output means the namespace is gone.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    return os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status >> 8


if __name__ == "__main__":
    sys.exit(main())

"""A throwaway local PostgreSQL server for tests (Debian's ``postgresql`` package).

``LocalPostgres`` creates a cluster with ``initdb`` in a fresh temporary folder,
starts it with ``pg_ctl`` on a free port of 127.0.0.1 (its Unix socket in the
same folder, so nothing outside it is touched), creates a database and stops
and deletes everything on exit::

    with LocalPostgres() as pg:
        pg.env()   # DAGSTER_PG_HOST, _PORT, _DB, _USERNAME, _PASSWORD
        pg.url     # postgresql://user:password@127.0.0.1:port/db

PostgreSQL refuses to run as root: when the tests run as uid 0, the cluster
folder is given to the ``postgres`` user (created by the Debian package) and
``initdb``/``pg_ctl`` run as that user through ``runuser`` (or ``su``). The
folder is made with ``tempfile.mkdtemp`` under the system temp dir because
pytest's own ``tmp_path`` sits in a root-only (0700) folder that ``postgres``
cannot enter, and a Unix socket path must stay under ~100 characters.

Host connections need a password (scram-sha-256), so the test proves that the
password really flows from the environment into Dagster's instance config.
"""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

USER = "dagster"


def find_pg_bin() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl``: $PATH first, then Debian's layout."""
    found = shutil.which("initdb"), shutil.which("pg_ctl")
    if all(found):
        return Path(found[0]).parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin"),
                        key=lambda p: int(Path(p).parent.name) if Path(p).parent.name.isdigit() else 0)
    for folder in reversed(candidates):  # newest major version first
        if (Path(folder) / "initdb").exists() and (Path(folder) / "pg_ctl").exists():
            return Path(folder)
    return None


def why_unavailable() -> str | None:
    """None when a server can be started here; otherwise the reason (for ``pytest.skip``)."""
    if find_pg_bin() is None:
        return ("PostgreSQL server binaries (initdb, pg_ctl) not found: "
                "apt-get install -y postgresql")
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no 'postgres' user to run the server as"
        if not (shutil.which("runuser") or shutil.which("su")):
            return "running as root and neither runuser nor su is available"
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LocalPostgres:
    def __init__(self, db_name: str = "dagster_instance", start_timeout_s: int = 30) -> None:
        self.db_name = db_name
        self.start_timeout_s = start_timeout_s
        self.user = USER
        self.password = secrets.token_hex(12)
        self.host = "127.0.0.1"
        self.port = 0
        self.bin = find_pg_bin()
        self.base: Path | None = None
        self.data: Path | None = None
        self.log: Path | None = None
        self.started = False

    # ---- running the server's own tools ---------------------------------------

    def _cmd(self, *args: str) -> list[str]:
        assert self.bin is not None
        tool = [str(self.bin / args[0]), *args[1:]]
        if os.geteuid() != 0:
            return tool
        if shutil.which("runuser"):
            return ["runuser", "-u", "postgres", "--", *tool]
        import shlex
        return ["su", "postgres", "-s", "/bin/sh", "-c", shlex.join(tool)]

    def _run(self, *args: str, timeout: float = 60) -> None:
        proc = subprocess.run(self._cmd(*args), capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL, cwd=self.base)
        if proc.returncode != 0:
            raise RuntimeError(f"{args[0]} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
                               f"\n{self.server_log()}")

    def server_log(self) -> str:
        if self.log and self.log.exists():
            return self.log.read_text(errors="replace")[-4000:]
        return ""

    # ---- lifecycle ----------------------------------------------------------------

    def start(self) -> "LocalPostgres":
        reason = why_unavailable()
        if reason:
            raise RuntimeError(reason)
        self.base = Path(tempfile.mkdtemp(prefix="evalpg-"))
        self.data = self.base / "data"
        self.log = self.base / "server.log"
        pwfile = self.base / "pwfile"
        pwfile.write_text(self.password + "\n")
        if os.geteuid() == 0:
            pg = pwd.getpwnam("postgres")
            os.chown(self.base, pg.pw_uid, pg.pw_gid)
            os.chown(pwfile, pg.pw_uid, pg.pw_gid)
        os.chmod(self.base, 0o700)
        os.chmod(pwfile, 0o600)
        self._run("initdb", "-D", str(self.data), "-U", self.user, f"--pwfile={pwfile}",
                  "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8",
                  "--locale=C", "--no-sync")
        pwfile.unlink()
        last_error: Exception | None = None
        for _ in range(3):  # the free port may be taken between probe and bind: retry
            self.port = free_port()
            options = (f"-p {self.port} -k {self.base} -c listen_addresses={self.host} "
                       "-c fsync=off -c synchronous_commit=off -c full_page_writes=off")
            try:
                self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", options,
                          "-w", "-t", str(self.start_timeout_s), "start",
                          timeout=self.start_timeout_s + 10)
                self.started = True
                break
            except RuntimeError as exc:
                last_error = exc
        if not self.started:
            raise RuntimeError(f"PostgreSQL did not start: {last_error}")
        self._create_database()
        return self

    def _create_database(self) -> None:
        import psycopg2

        con = psycopg2.connect(**self.connect_args(dbname="postgres"))
        try:
            con.autocommit = True
            with con.cursor() as cur:
                cur.execute(f'CREATE DATABASE "{self.db_name}"')
        finally:
            con.close()

    def stop(self) -> None:
        try:
            if self.started and self.data is not None:
                try:
                    self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "-t", "30", "stop",
                              timeout=40)
                except Exception:
                    self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "stop", timeout=20)
                self.started = False
        finally:
            if self.base is not None:
                shutil.rmtree(self.base, ignore_errors=True)
                self.base = None

    def __enter__(self) -> "LocalPostgres":
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- how clients reach it -------------------------------------------------------

    def connect_args(self, dbname: str | None = None) -> dict[str, object]:
        return {"host": self.host, "port": self.port, "user": self.user,
                "password": self.password, "dbname": dbname or self.db_name, "connect_timeout": 10}

    @property
    def url(self) -> str:
        return f"postgresql://{self.user}:{self.password}@{self.host}:{self.port}/{self.db_name}"

    def env(self) -> dict[str, str]:
        """The variables ``deploy/dagster.team.yaml`` reads."""
        return {"DAGSTER_PG_HOST": self.host, "DAGSTER_PG_PORT": str(self.port),
                "DAGSTER_PG_DB": self.db_name, "DAGSTER_PG_USERNAME": self.user,
                "DAGSTER_PG_PASSWORD": self.password}

    def query(self, sql: str, params: tuple | list | None = None) -> list[tuple]:
        import psycopg2

        con = psycopg2.connect(**self.connect_args())
        try:
            with con.cursor() as cur:
                cur.execute(sql, params)
                return cur.fetchall()
        finally:
            con.close()

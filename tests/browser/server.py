"""A real JupyterLab server on 127.0.0.1, started and stopped by the tests.

It runs in its own process group on a free port with a token of our choosing, on a
temporary copy of the course, with JupyterLab's user settings, workspaces and runtime
files in temporary folders (nothing read from or written to the user's ~/.jupyter).
"""

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

# JupyterLab's settings for the tests: no "Would you like to get notified about official Jupyter news?"
# popup over the notebook, and no update check (this network reaches package registries only).
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false",
                                                                          "checkForUpdates": False},
}


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class JupyterLab:
    """``python -m jupyterlab`` serving ``root``; ``url(path)`` gives an address with the token."""

    def __init__(self, root, state):
        self.root, self.state = Path(root), Path(state)
        self.port, self.token = free_port(), secrets.token_hex(16)
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = self.state / "jupyterlab.log"
        self.proc = None

    def url(self, path):
        sep = "&" if "?" in path else "?"
        return f"{self.base}/{path.lstrip('/')}{sep}token={self.token}"

    def start(self, timeout=60):
        settings = self.state / "lab-settings"
        for name, values in LAB_SETTINGS.items():
            (settings / name).parent.mkdir(parents=True, exist_ok=True)
            (settings / name).write_text(json.dumps(values), encoding="utf-8")
        env = dict(os.environ,
                   JUPYTERLAB_SETTINGS_DIR=str(settings),
                   JUPYTERLAB_WORKSPACES_DIR=str(self.state / "workspaces"),
                   JUPYTER_CONFIG_DIR=str(self.state / "config"),
                   JUPYTER_RUNTIME_DIR=str(self.state / "runtime"),
                   PYTHONWARNINGS="ignore")
        # Kernels, nbgrader and `python` in a terminal come from this interpreter's environment.
        env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
        command = [sys.executable, "-m", "jupyterlab", "--ServerApp.open_browser=False",
                   "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={self.port}",
                   "--ServerApp.port_retries=0", f"--IdentityProvider.token={self.token}",
                   f"--ServerApp.root_dir={self.root}"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            command.append("--allow-root")   # JupyterLab refuses to run as root without it
        log = open(self.log_path, "w", encoding="utf-8")   # noqa: SIM115 - closed with the process
        self.proc = subprocess.Popen(command, cwd=self.root, env=env, stdout=log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"JupyterLab exited with status {self.proc.returncode}:\n{self.log_tail()}")
            with contextlib.suppress(OSError):
                if self.api("api").get("version"):
                    return self
            time.sleep(0.25)
        self.stop()
        raise RuntimeError(f"JupyterLab did not answer on {self.base}/api within {timeout} s:\n{self.log_tail()}")

    def api(self, path, method="GET"):
        request = urllib.request.Request(self.url(path), method=method)
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
        return json.loads(body) if body else None

    def shutdown_sessions(self):
        """Shut down every notebook's kernel (each holds a few hundred MB with torch imported)."""
        with contextlib.suppress(OSError):
            for session in self.api("api/sessions"):
                self.api(f"api/sessions/{session['id']}", method="DELETE")

    def stop(self):
        if self.proc is None or self.proc.poll() is not None:
            return
        self.shutdown_sessions()
        # SIGTERM lets the server shut its kernels down (they run in sessions of their own).
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def log_tail(self, chars=4000):
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")[-chars:]
        except OSError:
            return "(no log)"

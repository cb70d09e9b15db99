"""A real JupyterHub on 127.0.0.1, started and stopped by the tests.

The hub runs as root (it must, to spawn each user's server as that user), with JupyterHub's default
PAMAuthenticator (the accounts' real passwords, through /etc/pam.d/login) and LocalProcessSpawner, and
its proxy ``configurable-http-proxy`` (npm). Its configuration, cookie secret, SQLite database, pid
files and log live in a temporary state directory (mode 0700). Each user's server runs the
interpreter of that user's environment (``Environment``): the course's venv for the instructor, the
student kit's venv for the students, each with its own Jupyter configuration directory on
``JUPYTER_CONFIG_PATH``. ``stop()`` ends the hub by process id (SIGTERM: it stops the servers it
spawned and its proxy), then every process still left of them.
"""

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from tests.browser.server import free_port

CHP = "configurable-http-proxy"


@dataclass
class Environment:
    """What one user's server runs: ``venv``'s ``jupyterhub-singleuser``, with ``config`` (a directory of
    Jupyter and nbgrader configuration) on JUPYTER_CONFIG_PATH, serving ``root`` (their home when None)."""

    venv: Path
    config: Path
    root: Path | None = None
    extra_env: dict = field(default_factory=dict)

    def spawner_settings(self):
        bin_dir = str(Path(self.venv) / "bin")
        env = {"PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin", "JUPYTER_CONFIG_PATH": str(self.config),
               "PYTHONWARNINGS": "ignore", "LANG": "C.UTF-8", **self.extra_env}
        return {"cmd": [f"{bin_dir}/jupyterhub-singleuser"], "env": env,
                "root": str(self.root) if self.root else None}


_CONFIG = """\
import json
c = get_config()  # noqa: F821
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {port}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {hub_port}
c.JupyterHub.cookie_secret_file = {state!r} + "/cookie_secret"
c.JupyterHub.db_url = "sqlite:///" + {state!r} + "/jupyterhub.sqlite"
c.JupyterHub.pid_file = {state!r} + "/jupyterhub.pid"
c.JupyterHub.cleanup_servers = True
c.JupyterHub.cleanup_proxy = True
c.ConfigurableHTTPProxy.command = [{chp!r}]
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_api_port}"
c.ConfigurableHTTPProxy.pid_file = {state!r} + "/proxy.pid"
c.ConfigurableHTTPProxy.should_start = True
# PAM, JupyterHub's default: the accounts' own passwords. No PAM session (pam_loginuid refuses one in a
# container, and a session adds nothing to a server that the spawner starts with the user's uid).
c.JupyterHub.authenticator_class = "pam"
c.PAMAuthenticator.open_sessions = False
c.Authenticator.allowed_users = set({users!r})
c.Authenticator.admin_users = set({admins!r})
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
c.Spawner.args = ["--ServerApp.shutdown_no_activity_timeout=0"]
ENVIRONMENTS = json.loads({environments!r})


def per_user(spawner):
    chosen = ENVIRONMENTS[spawner.user.name]
    spawner.cmd = chosen["cmd"]
    spawner.environment = chosen["env"]
    if chosen["root"]:
        spawner.notebook_dir = chosen["root"]


c.Spawner.pre_spawn_hook = per_user
"""


class JupyterHub:
    """``jupyterhub`` as root on 127.0.0.1; ``url(path)`` gives an address through its proxy."""

    def __init__(self, state, environments, admins=()):
        self.state = Path(state)
        self.state.mkdir(parents=True, exist_ok=True)
        os.chmod(self.state, 0o700)
        self.environments = environments          # {user name: Environment}
        self.admins = list(admins)
        self.port, self.hub_port, self.proxy_api_port = free_port(), free_port(), free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = self.state / "jupyterhub.log"
        self.proc = None

    def url(self, path=""):
        return f"{self.base}/{path.lstrip('/')}"

    def write_config(self):
        chp = shutil.which(CHP)
        environments = {name: env.spawner_settings() for name, env in self.environments.items()}
        config = _CONFIG.format(port=self.port, hub_port=self.hub_port, proxy_api_port=self.proxy_api_port,
                                state=str(self.state), chp=chp, users=sorted(self.environments),
                                admins=sorted(self.admins), environments=json.dumps(environments))
        path = self.state / "jupyterhub_config.py"
        path.write_text(config, encoding="utf-8")
        return path

    def start(self, timeout=60):
        config = self.write_config()
        env = dict(os.environ, PYTHONWARNINGS="ignore")
        env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
        env.pop("JUPYTERHUB_API_TOKEN", None)
        command = [sys.executable, "-m", "jupyterhub", "-f", str(config)]
        with open(self.log_path, "w", encoding="utf-8") as log:
            self.proc = subprocess.Popen(command, cwd=self.state, env=env, stdout=log, stderr=subprocess.STDOUT,
                                         start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"JupyterHub exited with status {self.proc.returncode}:\n{self.log_tail()}")
            with contextlib.suppress(OSError, urllib.error.URLError):
                with urllib.request.urlopen(self.url("hub/api"), timeout=5) as response:
                    if json.loads(response.read()).get("version"):
                        return self
            time.sleep(0.25)
        self.stop()
        raise RuntimeError(f"JupyterHub did not answer on {self.base}/hub/api within {timeout} s:\n"
                           f"{self.log_tail()}")

    def _family(self):
        with contextlib.suppress(psutil.Error):
            return [psutil.Process(self.proc.pid), *psutil.Process(self.proc.pid).children(recursive=True)]
        return []

    def stop(self, grace_s=20):
        """SIGTERM to the hub (it stops every server it spawned, and its proxy), then SIGKILL to whatever of
        them is left, each by its process id."""
        if self.proc is None:
            return
        family = self._family()
        for pid_file in ("proxy.pid",):
            with contextlib.suppress(OSError, ValueError, psutil.Error):
                family.append(psutil.Process(int((self.state / pid_file).read_text())))
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        _, alive = psutil.wait_procs(family, timeout=1)
        for proc in alive:
            with contextlib.suppress(psutil.Error):
                proc.kill()
        psutil.wait_procs(alive, timeout=5)

    def log_tail(self, chars=6000):
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")[-chars:]
        except OSError:
            return "(no log)"

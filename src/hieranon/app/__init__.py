"""The custodian's workbench: a local web application from a table to a
verified release (``hieranon app``).

It sits above :mod:`hieranon.report` and below :mod:`hieranon.cli`: every
run goes through the one job pipeline (:mod:`hieranon.job`), configured by
the same YAML file the command line reads. Its web dependencies (FastAPI,
uvicorn, Jinja2, python-multipart) are the ``app`` extra: ``pip install
"hieranon[app]"``; :func:`missing_dependency` names the first one absent.
"""

from __future__ import annotations

import importlib.util
import logging
import secrets
import socket
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger("hieranon.app")

__all__ = ["missing_dependency", "serve", "APP_DEPENDENCIES", "INSTALL_HINT"]

#: The modules of the ``app`` extra (module -> distribution).
APP_DEPENDENCIES = {"fastapi": "fastapi", "uvicorn": "uvicorn", "jinja2": "Jinja2", "multipart": "python-multipart"}
INSTALL_HINT = 'pip install "hieranon[app]"'


def missing_dependency() -> str | None:
    """The first distribution of the ``app`` extra that is not installed (None: all are)."""
    for module, dist in APP_DEPENDENCIES.items():
        if importlib.util.find_spec(module) is None:
            return dist
    return None


def bind(port: int = 0) -> socket.socket:
    """A listening socket on the loopback interface only (``port`` 0: a free one)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError:
        sock.close()
        raise
    sock.listen(64)
    return sock


def serve(table: Path | None = None, config: Path | None = None, *, port: int = 0,
          ready: Callable[[str], None] | None = None) -> None:
    """Serve the workbench on 127.0.0.1 until interrupted; ``ready(url)`` is
    called with its address (holding the session's token) once it listens.
    The session's temporary folder is removed when it stops."""
    import uvicorn

    from .server import create_app

    token = secrets.token_urlsafe(24)
    app = create_app(table, config, token=token)
    sock = bind(port)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/?token={token}"
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on"))
    original = server.startup

    async def startup(sockets=None):
        await original(sockets=sockets)
        if ready is not None:
            ready(url)

    server.startup = startup
    server.run(sockets=[sock])

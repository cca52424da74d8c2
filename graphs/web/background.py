"""The web app served by uvicorn on a free loopback port in a background thread: for the browser tests, the web
page benchmark, and anyone who embeds the page in a notebook. ``evidex web`` is the way to serve it."""
from __future__ import annotations

import json
import socket
import threading
import time
import urllib.request


class BackgroundServer:
    """``with BackgroundServer(app) as server:`` ... ``server.url``. Entering waits until the app is up and warm
    (``/api/store`` says ready: the store's indexes are open), so the page is ready to ask."""

    def __init__(self, app, key: str | None = None, ready_timeout_s: float = 30.0):
        import uvicorn

        self.app, self.key, self.ready_timeout_s = app, key, ready_timeout_s
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning",
                                                    access_log=False))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self):
        self.thread.start()
        deadline = time.time() + self.ready_timeout_s
        while time.time() < deadline:
            try:
                request = urllib.request.Request(f"{self.url}/api/store", headers={"X-Evidex-Key": self.key or ""})
                with urllib.request.urlopen(request, timeout=2) as r:
                    if json.loads(r.read())["ready"]:
                        return self
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"the web server did not become ready within {self.ready_timeout_s:.0f} s")

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(timeout=10)

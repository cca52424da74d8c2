"""Pages as PNG images for the page viewer, rendered by PyMuPDF in a helper process.

PyMuPDF must not be used from two threads at once (its documentation: "no Python threading support"), and the
server's threads already use it: the agent's image view and figure text, and ingestion of uploads. So pages are
rendered in one helper process (``python -m evidex.graphs.web.page_render``, a plain child process: nothing of
the server is re-imported in it), started and warmed when the server starts, one page at a time over its stdin
and stdout; the last pages rendered are kept in memory, so a page clicked again shows at once.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections import OrderedDict
from pathlib import Path

ZOOM = 1.5  # 918 x 1188 pixels for a US-letter page: sharp in a half-screen panel, ~0.1 s to render
CACHED_PAGES = 48


class RenderError(RuntimeError):
    """The page could not be rendered; the message says why."""


# -- the helper process --------------------------------------------------------------------------------------
def serve(stdin=None, stdout=None) -> None:
    """One JSON request per line ``{"path", "page", "zoom"}``; each answer is a JSON line ``{"ok", "size"|"error"}``
    followed by ``size`` bytes of PNG."""
    import pymupdf

    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    docs: OrderedDict[str, pymupdf.Document] = OrderedDict()
    for line in stdin:
        data = b""
        try:
            req = json.loads(line)
            if req.get("ping"):  # the server's warm-up: PyMuPDF is imported, the helper answers
                stdout.write(b'{"ok": true, "size": 0}\n')
                stdout.flush()
                continue
            doc = docs.pop(req["path"], None) or pymupdf.open(req["path"])
            docs[req["path"]] = doc
            while len(docs) > 4:
                docs.popitem(last=False)[1].close()
            zoom = float(req["zoom"])
            data = doc[int(req["page"]) - 1].get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), alpha=False).tobytes("png")
            head = {"ok": True, "size": len(data)}
        except Exception as exc:  # noqa: BLE001 - reported to the server, which shows it
            head = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:500]}
        stdout.write(json.dumps(head).encode() + b"\n" + data)
        stdout.flush()


# -- the server's side ---------------------------------------------------------------------------------------
class PageRenderer:
    def __init__(self, zoom: float = ZOOM) -> None:
        self.zoom = zoom
        self._proc: subprocess.Popen | None = None
        self._lock = threading.Lock()
        self._cache: OrderedDict[tuple, bytes] = OrderedDict()

    def _process(self) -> subprocess.Popen:
        if self._proc is None or self._proc.poll() is not None:
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
            self._proc = subprocess.Popen([sys.executable, "-m", "evidex.graphs.web.page_render"], env=env,
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        return self._proc

    def start(self) -> None:
        """Start the helper process (it imports PyMuPDF while the server warms up its other parts)."""
        with self._lock:
            self._process()

    def warm(self) -> None:
        """Wait until the helper answers, so the first page clicked renders at once."""
        self._exchange({"ping": True})

    def _ask(self, pdf: Path, page_number: int) -> bytes:
        head, data = self._exchange({"path": str(pdf), "page": page_number, "zoom": self.zoom})
        if not head.get("ok"):
            raise RenderError(f"cannot render page {page_number}: {head.get('error')}")
        return data

    def _exchange(self, message: dict) -> tuple[dict, bytes]:
        request = json.dumps(message).encode() + b"\n"
        with self._lock:
            for _attempt in (1, 2):  # a helper that died (MuPDF can crash on a malformed file) is restarted once
                proc = self._process()
                try:
                    proc.stdin.write(request)
                    proc.stdin.flush()
                    line = proc.stdout.readline()
                except (BrokenPipeError, OSError):
                    line = b""
                if line:
                    break
                proc.kill()
                proc.wait()
                self._proc = None
            else:
                raise RenderError("the page renderer stopped working on this page")
            head = json.loads(line)
            return head, proc.stdout.read(head.get("size", 0))

    def png(self, pdf: Path, page_number: int) -> bytes:
        """The page as PNG (blocking: call it from a worker thread)."""
        stat = pdf.stat()
        key = (str(pdf), stat.st_mtime_ns, stat.st_size, page_number, self.zoom)
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        data = self._ask(pdf, page_number)
        with self._lock:
            self._cache[key] = data
            while len(self._cache) > CACHED_PAGES:
                self._cache.popitem(last=False)
        return data

    def close(self) -> None:
        with self._lock:
            proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()  # it holds nothing worth saving, and may still be importing PyMuPDF
            proc.wait()


if __name__ == "__main__":
    serve()

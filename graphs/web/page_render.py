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
    """The page could not be rendered; the message says why (the server log has the helper's own words)."""


Line = tuple[float, float, float, float, int, str]  # x0, y0, x1, y1 (PDF points, origin top-left), block, text


# -- the helper process --------------------------------------------------------------------------------------
def serve(stdin=None, stdout=None) -> None:
    """One JSON request per line: ``{"path", "page", "zoom"}`` for the page as PNG, ``{"path", "page", "lines":
    true}`` for its text lines with their boxes. Each answer is a JSON line ``{"ok", "size", "lines"?}`` or
    ``{"ok": false, "error"}``, followed by ``size`` bytes of PNG."""
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
            page = doc[int(req["page"]) - 1]
            if req.get("lines"):
                head = {"ok": True, "size": 0, "lines": text_lines(page)}
            else:
                zoom = float(req["zoom"])
                data = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), alpha=False).tobytes("png")
                head = {"ok": True, "size": len(data)}
        except Exception as exc:  # noqa: BLE001 - reported to the server, which shows it
            head = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:500]}
        stdout.write(json.dumps(head).encode() + b"\n" + data)
        stdout.flush()


def text_lines(page) -> list[Line]:
    """A PyMuPDF page's text lines, block by block, each with its box and block number (from its words)."""
    lines: dict[tuple[int, int], list] = {}
    for x0, y0, x1, y1, word, block, line, _ in page.get_text("words"):
        box = lines.setdefault((block, line), [x0, y0, x1, y1, block, []])
        box[0], box[1], box[2], box[3] = min(box[0], x0), min(box[1], y0), max(box[2], x1), max(box[3], y1)
        box[5].append(word)
    return [(round(a, 1), round(b, 1), round(c, 1), round(d, 1), blk, " ".join(words))
            for (_, _), (a, b, c, d, blk, words) in sorted(lines.items(), key=lambda kv: kv[0])]


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

    def _ask(self, pdf: Path, page_number: int, lines: bool = False) -> tuple[dict, bytes]:
        message = {"path": str(pdf), "page": page_number, **({"lines": True} if lines else {"zoom": self.zoom})}
        head, data = self._exchange(message)
        if not head.get("ok"):
            from evidex.graphs.web.errors import failure

            text, _ = failure(f"Page {page_number} of this paper cannot be shown", None,
                              context=f"page renderer on {pdf} page {page_number}: {head.get('error')}")
            raise RenderError(text)
        return head, data

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
                raise RenderError("The page renderer stopped working on this page (its PDF may be damaged).")
            head = json.loads(line)
            return head, proc.stdout.read(head.get("size", 0))

    def _cached(self, key: tuple, make):
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        value = make()
        with self._lock:
            self._cache[key] = value
            while len(self._cache) > CACHED_PAGES * 2:
                self._cache.popitem(last=False)
        return value

    def png(self, pdf: Path, page_number: int) -> bytes:
        """The page as PNG (blocking: call it from a worker thread)."""
        stat = pdf.stat()
        key = (str(pdf), stat.st_mtime_ns, stat.st_size, page_number, self.zoom)
        return self._cached(key, lambda: self._ask(pdf, page_number)[1])

    def lines(self, pdf: Path, page_number: int) -> list[Line]:
        """The page's text lines with their boxes (blocking: call it from a worker thread)."""
        stat = pdf.stat()
        key = (str(pdf), stat.st_mtime_ns, stat.st_size, page_number, "lines")
        return self._cached(key, lambda: [tuple(line) for line in self._ask(pdf, page_number, lines=True)[0]["lines"]])

    def close(self) -> None:
        with self._lock:
            proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()  # it holds nothing worth saving, and may still be importing PyMuPDF
            proc.wait()


if __name__ == "__main__":
    serve()

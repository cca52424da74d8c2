"""evidex serve: the local GGUF model as one OpenAI-compatible server for many workers.

A run with ``model.spec: local`` starts llama.cpp inside its own process; a run whose items are spread over
several processes (``--executor ray``, several runs at once, a LangGraph server) would start one copy of the
model per process. This command starts one server (llama.cpp through xllamacpp, as the in-process one) that they
all use as an OpenAI-compatible model:

    evidex serve --port 8080 --slots 2          # prints the key and the settings to use
    OPENAI_API_KEY=<key> evidex run --task mixed --concurrency 2 \\
        --llm openai:qwen2.5-coder-1.5b --set model.base_url=http://127.0.0.1:8080/v1

It listens on 127.0.0.1 unless ``--host`` says otherwise, and every request needs the API key: taken from
``EVIDEX_SERVE_API_KEY`` (or ``--key-file``, created with a new key when missing, readable by its owner only),
else a new key printed once at start. The key is never written to a log. ``--slots N`` requests are decoded
together in one batch (continuous batching), each slot with ``--ctx`` tokens of context. The same settings work
against vLLM on a GPU machine (docs/scaling-out.md).
"""
from __future__ import annotations

import argparse
import os
import secrets
import signal
import sys
import threading
from pathlib import Path

from evidex.tools.cli_help import plain_help
from evidex.tools.loopback import is_loopback
from evidex.tools.server_keys import check_key, read_key_file, write_key_file

KEY_ENV = "EVIDEX_SERVE_API_KEY"
DEFAULT_PORT = 8080


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="evidex serve", description=plain_help(__doc__),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this machine only; anything else exposes the "
                        "model to the network, still behind the key)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0 = a free one)")
    p.add_argument("--model", type=Path, help="GGUF file (default: EVIDEX_MODEL_PATH, else the verified default "
                                              "Qwen2.5-Coder-1.5B, fetched once like the in-process model)")
    p.add_argument("--name", help="model name clients ask for (--llm openai:NAME; default: the file's name "
                                  "without .gguf)")
    p.add_argument("--slots", "--parallel", dest="slots", type=int, default=2,
                   help="requests decoded together (parallel slots; default 2)")
    p.add_argument("--ctx", type=int, default=8192, help="context per slot, in tokens (default 8192)")
    p.add_argument("--threads", type=int, help="CPU threads (default: every core)")
    p.add_argument("--prompt-cache-mib", type=int, default=0,
                   help="host memory for finished prompts' KV cache (default 0; see model.prompt_cache_mib)")
    p.add_argument("--key-file", type=Path, help=f"read the API key from this file (created with a new key, mode "
                                                 f"0600, when missing); default: ${KEY_ENV}, else a new key")
    return p.parse_args(argv)


def resolve_key(key_file: Path | None) -> tuple[str, str]:
    """(key, where it came from). Order: the environment, the key file, a new key. A key shorter than 16
    characters, or a key file others can read, is refused (:mod:`tools.server_keys`)."""
    key = os.environ.get(KEY_ENV, "").strip()
    if key:
        return check_key(key, f"${KEY_ENV}"), f"${KEY_ENV}"
    if key_file is not None:
        if key_file.is_file():
            return read_key_file(key_file), str(key_file)
        key = secrets.token_urlsafe(24)
        write_key_file(key_file, key)  # mode 0600: never readable by others
        return key, f"{key_file} (new)"
    return secrets.token_urlsafe(24), "new"


def check_args(args: argparse.Namespace) -> str | None:
    for flag, value, least in (("--slots", args.slots, 1), ("--ctx", args.ctx, 512), ("--port", args.port, 0),
                               ("--prompt-cache-mib", args.prompt_cache_mib, 0)):
        if value < least:
            return f"{flag} must be at least {least} (got {value})"
    if args.port > 65535:
        return f"--port must be at most 65535 (got {args.port})"
    if args.threads is not None and args.threads < 1:
        return f"--threads must be at least 1 (got {args.threads})"
    if args.model is not None and not args.model.expanduser().is_file():
        return f"--model {args.model}: no such file"
    return None


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    problem = check_args(args)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    try:
        key, key_source = resolve_key(args.key_file)
    except (OSError, ValueError) as exc:
        print(f"error: API key: {exc}", file=sys.stderr)
        return 2
    from evidex.agents.local_llm import ModelUnavailableError, resolve_gguf, serve_model

    try:
        path = args.model.expanduser().resolve() if args.model else resolve_gguf()
    except ModelUnavailableError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    name = args.name or path.name.removesuffix(".gguf")
    if not is_loopback(args.host):
        print(f"warning: listening on {args.host}: other machines can reach the model (the key is still required)",
              file=sys.stderr, flush=True)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    try:
        server, url = serve_model(path, host=args.host, port=args.port, api_key=key, name=name, n_ctx=args.ctx,
                                  threads=args.threads, parallel=args.slots, prompt_cache_mib=args.prompt_cache_mib)
    except (ModelUnavailableError, RuntimeError, OSError) as exc:
        print(f"error: could not start the model server on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    print(f"serving {name} at {url} ({args.slots} slots x {args.ctx} tokens, "
          f"{args.threads or os.cpu_count()} threads); Ctrl-C stops it", flush=True)
    if key_source == "new":
        # Shown once, on the terminal that started the server; a client needs it. Not logged anywhere else.
        print(f"API key (new, this run only): {key}", flush=True)
    else:
        print(f"API key: from {key_source}", flush=True)
    print(f"use it:  OPENAI_API_KEY=<key> evidex run ... --llm openai:{name} "
          f"--set model.base_url={url}", flush=True)
    stop.wait()
    print("stopping", flush=True)
    del server  # dropping the Server object stops llama.cpp's loop
    return 0


if __name__ == "__main__":
    sys.exit(main())

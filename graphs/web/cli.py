"""evidex web --db NAME: a web page to ask questions of your papers.

Open the printed address in a browser. The page lists the store's papers (filter them, tick some to ask about
those only), asks a question with NeuSym or a baseline and shows the agent's steps as it takes them, then the
answer; click a citation to see its page with the cited passage highlighted. Each answer links to its trace;
the questions asked in this store are kept; PDFs dropped on the page are ingested into the store.

  evidex web --db mypapers                      # http://127.0.0.1:8000/
  evidex web --db mypapers --port 8080 --llm openai:gpt-4o-mini
  evidex web --db newstore --new                # an empty store: add papers by upload
  EVIDEX_WEB_KEY=... evidex web --db mypapers --host 0.0.0.0

The server listens on loopback unless --host says otherwise; then every visitor needs the access key, taken
from EVIDEX_WEB_KEY or generated and printed once at start. Make a store first with
evidex ingest papers/ --db mypapers.
"""
from __future__ import annotations

import argparse
import os
import secrets
import sys
from pathlib import Path

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    from evidex.tools.cli_help import plain_help

    p = argparse.ArgumentParser(prog="evidex web", description=plain_help(__doc__),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--db", help="store name (made with evidex ingest ... --db NAME)")
    p.add_argument("--store-dir", type=Path, help="a store folder instead of --db")
    p.add_argument("--new", action="store_true",
                   help="create the store empty if it does not exist (add papers by upload)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--config", default="airqa/airqa", help="the config chosen when the page opens (airqa/<method>)")
    p.add_argument("--llm", help="model spec for every config (default: the config's, i.e. local)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config value for every question, e.g. --set qa.max_turns=4")
    p.add_argument("--ingest-config", help="ingestion config for uploads, as evidex ingest --config")
    p.add_argument("--max-upload-mb", type=int, default=200, help="largest PDF accepted (default 200 MB)")
    return p.parse_args(argv)


def access_key(host: str, environ=os.environ) -> tuple[str | None, str | None]:
    """(the key, a note to print once): none on loopback unless EVIDEX_WEB_KEY is set; elsewhere that key or a
    generated one (the note then shows it, the only time it is ever printed). A key shorter than 16 characters is
    refused (ValueError, one line)."""
    from evidex.graphs.web.access import KEY_ENV, check_key
    from evidex.tools.loopback import is_loopback

    given = environ.get(KEY_ENV) or None
    if given:
        return check_key(given), f"Access key: the one in {KEY_ENV}."
    if is_loopback(host):
        return None, None
    key = secrets.token_urlsafe(24)
    return key, f"Access key (shown once, not stored): {key}"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not (args.db or args.store_dir):
        print("error: give --db NAME (or --store-dir DIR) of a store made with evidex ingest PDFS --db NAME",
              file=sys.stderr)
        return 2
    from evidex.graphs.web.store_claim import StoreInUseError
    from evidex.tools.extras import MissingExtraError, require
    from evidex.tools.loopback import is_loopback
    from evidex.tools.store import StoreError, connect_writable, store_paths

    try:  # the page's server packages are the web extra
        for module in ("starlette", "sse_starlette", "uvicorn", "multipart"):
            require(module, "web", "the web page")
    except MissingExtraError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    shown_host = f"[{args.host}]" if ":" in args.host else args.host
    address = f"http://{shown_host}:{args.port}/"
    try:
        key, note = access_key(args.host)
        paths = store_paths(args.db, args.store_dir)
        if args.new and not paths.db.exists():
            connect_writable(paths.db).close()  # the schema, empty: uploads fill it
            print(f"Created an empty store at {paths.root}.")
        from evidex.graphs.web.app import WebOptions, create_app

        options = WebOptions(db=args.db, store_dir=args.store_dir, access_key=key, loopback=is_loopback(args.host),
                             default_config=args.config, llm_spec=args.llm, overrides=args.overrides,
                             ingest_config=args.ingest_config, max_upload_mb=args.max_upload_mb, address=address)
        app = create_app(options)
    except StoreInUseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except StoreError as exc:
        print(f"error: {exc} (or start with --new to add papers from the page)", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    import uvicorn

    print(f"evidex: store {args.db or paths.root} at {address}  (Ctrl-C to stop)")
    if note:
        print(note)
        if key and not os.environ.get("EVIDEX_WEB_KEY"):
            print(f"Open {address}#key={key} (the part after # stays in the browser)")
    sys.stdout.flush()
    # warning level: uvicorn's access log would list every request; nothing secret is in a URL, but it is noise
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", access_log=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())

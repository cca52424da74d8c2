"""``evidex web --db NAME``: see :mod:`graphs.web.cli`."""
import sys

if __name__ == "__main__":  # the page-render helper process re-imports this module; it must not start a server
    from evidex.graphs.web.cli import main

    sys.exit(main())

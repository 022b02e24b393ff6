"""``python -m svc`` runs the command-line tool."""

from .cli import main

if __name__ == "__main__":  # pragma: no cover - exercised through a subprocess test
    main()

"""The command line (parsing only): `fraglab.cli.main:main` is the entry point; `app` is the typer app."""

from .main import app, main

__all__ = ["app", "main"]

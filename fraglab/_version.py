"""The package version, in a module of its own: nothing needs the package root to learn it."""

__version__ = "0.1.0"

"""The command line: a thin layer over the library. Nothing imports this package."""

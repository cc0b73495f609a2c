"""The bodies of the `patchwrite` subcommands, one module per command.

Each module defines `register(sub)`, which adds its subparser and sets `func` to the function that runs it
(returning the exit code), and keeps its heavy imports inside that function so `patchwrite --help` stays fast.
`cli.py` lists the modules in `COMMANDS`; adding a subcommand is one module here and one line there.
"""

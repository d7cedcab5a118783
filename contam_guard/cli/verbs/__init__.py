"""The commands as typer declares them, a module per group; each registers its commands on
``cli.app.app`` when imported (``contam_guard.cli`` imports them in the order ``--help`` lists
them) and calls its ``cli.commands`` module only when it runs."""

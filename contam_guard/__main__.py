from contam_guard.cli import run

run()

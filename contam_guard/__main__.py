from contam_guard.cli import main

main()

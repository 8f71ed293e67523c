from socialbench.cli import main

main()

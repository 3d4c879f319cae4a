"""The command-line interface: thin commands over library functions."""

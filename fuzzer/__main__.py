"""`python -m fuzzer` is the `fuzz` command."""

from fuzzer.cli import main

if __name__ == "__main__":
    main(prog_name="fuzz")

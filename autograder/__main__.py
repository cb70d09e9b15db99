from autograder.cli import main

if __name__ == "__main__":     # not when a spawned process (a local Dask worker) imports this module again
    raise SystemExit(main())

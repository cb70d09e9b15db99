"""``python -m autograder <command>``: the instructor's command line."""

import argparse


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m autograder", description="Effective PyTorch Lab course tools.")
    parser.add_argument("--course", default=".", help="the nbgrader course directory (default: .)")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("build", help="rebuild release/ and solutions/ from source/")
    p.add_argument("--check", action="store_true", help="only compare; exit 1 if release/ or solutions/ is stale")
    p.add_argument("topics", nargs="*", help="only these assignments (default: all)")

    args = parser.parse_args(argv)
    if args.command == "build":
        from .build import main as build
        return build(args.course, check=args.check, only=args.topics or None)
    return 2

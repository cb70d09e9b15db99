"""``python -m autograder <command>``: the instructor's command line."""

import argparse


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m autograder", description="Effective PyTorch Lab course tools.")
    parser.add_argument("--course", default=".", help="the nbgrader course directory (default: .)")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("build", help="rebuild release/ and solutions/ from source/")
    p.add_argument("--check", action="store_true", help="only compare; exit 1 if release/ or solutions/ is stale")
    p.add_argument("topics", nargs="*", help="only these assignments (default: all)")

    p = sub.add_parser("demo", help="release, grade four sample students on a temporary course, print the gradebook")
    p.add_argument("topics", nargs="*", help="only these assignments (default: all)")
    p.add_argument("--keep", metavar="DIR", help="build the demo course in DIR and keep it")

    p = sub.add_parser("grade", help="autograde every submission under submitted/ with limits and progress")
    p.add_argument("assignments", nargs="*", help="only these assignments (default: all)")
    p.add_argument("--student", action="append", help="only this student (repeatable)")

    p = sub.add_parser("export", help="export grades as CSV and/or Gradescope results.json files")
    p.add_argument("assignments", nargs="*", help="only these assignments (default: all)")
    p.add_argument("--csv", metavar="FILE", help="one row per student and assignment, one column per check")
    p.add_argument("--gradescope", metavar="DIR", help="write DIR/<student>/<assignment>/results.json")

    p = sub.add_parser("check", help="grade a .py or .ipynb file against a topic's checks, without nbgrader")
    p.add_argument("topic", help="the assignment whose checks to run, e.g. stability")
    p.add_argument("path", help="a Python module or a notebook defining the exercise's names")
    p.add_argument("--json", action="store_true", help="print the results as JSON")

    args = parser.parse_args(argv)
    if args.command == "build":
        from .build import main as build
        return build(args.course, check=args.check, only=args.topics or None)
    if args.command == "demo":
        from .demo import run_demo
        run_demo(args.course, only=args.topics or None, keep=args.keep)
        return 0
    if args.command == "grade":
        from .build import topics
        from .grading import grade_all, load_report
        from .report import print_gradebook
        assignments = args.assignments or topics(args.course)
        results = grade_all(args.course, assignments, args.student)
        students = sorted({r.student for r in results})
        print_gradebook(args.course, assignments, students, load_report(args.course))
        return 0
    if args.command == "export":
        from .build import topics
        from .export import export_csv, export_gradescope
        assignments = args.assignments or topics(args.course)
        if not (args.csv or args.gradescope):
            parser.error("export needs --csv FILE and/or --gradescope DIR")
        if args.csv:
            print(f"wrote {export_csv(args.course, args.csv, assignments)}")
        if args.gradescope:
            print(f"wrote {len(export_gradescope(args.course, args.gradescope, assignments))} results.json files")
        return 0
    if args.command == "check":
        from ..selfcheck import main as selfcheck
        return selfcheck(args.topic, args.path, as_json=args.json)
    return 2

"""``python -m autograder gradescope [assignment ...]``: Gradescope's ``autograder.zip`` for one assignment or
several; the bundle is built by :mod:`autograder.gradescope.bundle` (docs/gradescope.md)."""

from autograder.gradescope.bundle import main


def arguments(parser):
    """The command's arguments (``autograder/cli.py`` lists the commands)."""
    parser.add_argument("assignments", nargs="*", help="the assignments it grades (default: every one Gradescope can)")
    parser.add_argument("-o", "--out", metavar="ZIP", help="where to write it (default: autograder.zip, or "
                                                           "autograder-<assignment>.zip for one)")
    parser.add_argument("--image", choices=("ubuntu-22.04", "ubuntu-24.04"), default="ubuntu-22.04",
                        help="Gradescope's base image: its python3 (3.10, 3.12) is the wheels' Python (default: "
                             "ubuntu-22.04)")
    parser.add_argument("--python", choices=("3.10", "3.11", "3.12", "3.13"),
                        help="the wheels' Python, for an image other than those (default: the image's)")
    parser.add_argument("--torch-index", metavar="URL",
                        help="an index with torch's CPU wheels, e.g. https://download.pytorch.org/whl/cpu")
    parser.add_argument("--gpu-items", choices=("waive", "fail"), default="waive",
                        help="GPU-only items, since Gradescope has no GPU: waive (out of the total) or fail (0); "
                             "default: waive")
    parser.add_argument("--feedback", choices=("immediate", "after_due_date"), default="immediate",
                        help="when students see each item's result (default: immediate)")
    parser.add_argument("--item-feedback", action="append", default=[], metavar="ITEM=POLICY",
                        help="another policy for one item (repeatable), e.g. --item-feedback speed=after_due_date")
    parser.add_argument("--wheels", metavar="DIR", help="the wheel cache to fill and reuse (default: "
                                                        "~/.cache/epl-gradescope-wheels)")


def from_command_line(args, parser):
    """``python -m autograder gradescope``: what the command prints, and its exit status."""
    return main(args.course, args.assignments, out=args.out, gpu_items=args.gpu_items,
                feedback=args.feedback, wheels=args.wheels, item_feedback=args.item_feedback,
                image=args.image, python=args.python, torch_index=args.torch_index)

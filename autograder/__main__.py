from .course.cli import main

raise SystemExit(main())

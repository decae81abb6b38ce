from .learner.cli import main

raise SystemExit(main())

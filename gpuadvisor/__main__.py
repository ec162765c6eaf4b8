from gpuadvisor.cli import main

raise SystemExit(main())

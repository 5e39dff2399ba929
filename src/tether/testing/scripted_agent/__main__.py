import sys

from tether.testing.scripted_agent.agent import main

sys.exit(main())

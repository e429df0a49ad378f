"""Old path of :mod:`contextquery.client.mcp_server`, kept for one release.

``python -m contextquery.mcp_server`` still starts the MCP server: hermes
configs written for earlier releases name it.
"""

import sys

from contextquery.client.mcp_server import *
from contextquery.client.mcp_server import __all__, main

if __name__ == "__main__":
    sys.exit(main())

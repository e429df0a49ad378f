"""Old path of :mod:`contextquery.client.context_tools`, kept for one release.

hermes configs written for earlier releases name ``contextquery.agent_tools``
(e.g. ``register_hermes_tools``); new code imports
``contextquery.client.context_tools``.
"""

from contextquery.client.context_tools import *
from contextquery.client.context_tools import __all__
from contextquery.client.wire import token_mask as mask_token

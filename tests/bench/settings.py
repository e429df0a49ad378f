"""Settings of the bench servers: the product's, plus the bench app and its floor routes."""

from project.settings import *
from project.settings import INSTALLED_APPS

INSTALLED_APPS = [*INSTALLED_APPS, "tests.bench.benchapp"]
ROOT_URLCONF = "tests.bench.benchapp.urls"

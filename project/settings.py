"""Hermes Ops settings: one module, every value from the environment (SPEC §1).

Each variable is read and validated here, at start-up; a bad value raises
``ImproperlyConfigured`` naming the variable, so the process never starts
half-configured. The README lists every variable.
"""

import os
import secrets
import tempfile
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlparse

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from project.booleans import parse_bool
from project.hostlist import parse_host_list
from project.wal import FALLBACK_AUTOCHECKPOINT_PAGES

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("HERMES_OPS_VAR_DIR", BASE_DIR / "var"))


def env_bool(name: str, default: bool) -> bool:
    """Read a boolean variable (``1/true/yes/on`` or ``0/false/no/off``; empty = the default)."""
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    value = parse_bool(raw)
    if value is None:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean; use true or false.")
    return value


def env_int(name: str, default: int, *, minimum: int = 0, maximum: int | None = None) -> int:
    """Read an integer variable within ``[minimum, maximum]``."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer.") from None
    if value < minimum or (maximum is not None and value > maximum):
        bound = f"between {minimum} and {maximum}" if maximum is not None else f"at least {minimum}"
        raise ImproperlyConfigured(f"{name}={value} is out of range; it must be {bound}.")
    return value


def env_probability(name: str) -> float | None:
    """Read a probability in ``(0, 1]``; unset or empty = None."""
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return None
    try:
        value = float(raw.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a number; use a probability such as 0.8.") from None
    if not 0.0 < value <= 1.0:
        raise ImproperlyConfigured(f"{name}={value} is out of range; it must be above 0 and at most 1.")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    """Read a comma-separated list variable."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def sqlite_private(path: str) -> None:
    """Make the SQLite database owner-only (0600): it holds session keys and token
    hashes. A new file is created so; an existing one (and its -wal and -shm
    files) is tightened. SQLite gives the -wal and -shm files it creates the
    database file's mode. In-memory databases are left alone."""
    if not path or path == ":memory:" or path.startswith("file:"):
        return
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        pass
    for name in (path, path + "-wal", path + "-shm"):
        try:
            if os.stat(name).st_mode & 0o077:
                os.chmod(name, 0o600)
        except FileNotFoundError:
            pass


def _secret_key() -> str:
    """``SECRET_KEY`` from the environment, else the generated key kept in
    ``var/secret_key`` (created once, mode 0600, so restarts and every worker agree)."""
    key = os.environ.get("SECRET_KEY", "").strip()
    if key:
        if len(key) < 32:
            raise ImproperlyConfigured("SECRET_KEY is too short; use at least 32 characters.")
        return key
    path = VAR_DIR / "secret_key"
    if not path.exists():
        VAR_DIR.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass  # another process won the race; read its key below
        else:
            with os.fdopen(fd, "w") as fh:
                fh.write(secrets.token_urlsafe(50))
    return path.read_text().strip()


SECRET_KEY = _secret_key()
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "knox",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI and Redoc served locally, so /api/docs/ works offline
    "project.apps.AxesConfig",
    "project",
    "patterns",
    "contextquery",
]

MIDDLEWARE = [
    "project.proxies.TrustedProxyMiddleware",
    "project.middleware.BodySizeLimitMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "project.middleware.DatabaseUnavailableMiddleware",
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "project.urls"
WSGI_APPLICATION = "project.wsgi.application"
APPEND_SLASH = False

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database: embedded SQLite by default, PostgreSQL when DATABASE_URL is set.
DATABASE_URL = os.environ.get("DATABASE_URL", "").strip()
if DATABASE_URL:
    try:
        _db = dj_database_url.parse(DATABASE_URL, conn_max_age=60, conn_health_checks=True)
    except Exception as exc:  # dj-database-url raises several types
        raise ImproperlyConfigured(f"DATABASE_URL is not a valid database URL: {exc}") from None
    if not _db.get("ENGINE"):
        raise ImproperlyConfigured("DATABASE_URL names an unknown database scheme.")
    if _db["ENGINE"] == "django.db.backends.sqlite3":
        _db.setdefault("OPTIONS", {})
else:
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    _db = {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ.get("SQLITE_PATH", str(VAR_DIR / "db.sqlite3")),
        # A worker thread keeps its connection (as with PostgreSQL): a fresh
        # SQLite connection re-reads the schema and recompiles every statement,
        # which cost a context query more than its own work (issue 14).
        "CONN_MAX_AGE": 60,
    }
    sqlite_private(_db["NAME"])
if _db["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets readers run beside the writer; IMMEDIATE makes every transaction
    # take the write lock up front, so concurrent writers queue (busy timeout)
    # instead of failing with "database is locked" on lock upgrade (SPEC §1).
    _db["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
        # Checkpoints run in a thread of each process (project.wal); a commit checkpoints
        # by itself only past FALLBACK_AUTOCHECKPOINT_PAGES.
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON; "
        f"PRAGMA wal_autocheckpoint={FALLBACK_AUTOCHECKPOINT_PAGES};",
        **_db.get("OPTIONS", {}),
    }
    # The test database is a file, never SQLite's shared in-memory database:
    # with that one Django hands every live-server thread the same connection,
    # and concurrent requests then corrupt each other's transactions.
    _db["TEST"] = {
        "NAME": os.environ.get("SQLITE_TEST_PATH")
        or os.path.join(tempfile.gettempdir(), f"hermes-ops-test-{os.getpid()}.sqlite3")
    }
DATABASES = {"default": _db}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Cache: local memory by default, Redis when REDIS_URL is set.
REDIS_URL = os.environ.get("REDIS_URL", "").strip()
if REDIS_URL:
    if urlparse(REDIS_URL).scheme not in {"redis", "rediss", "unix"}:
        raise ImproperlyConfigured("REDIS_URL must start with redis://, rediss:// or unix://.")
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 10}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Log-in throttling (django-axes): after LOGIN_FAILURE_LIMIT wrong passwords for one user
# from one address, that pair is locked out for LOGIN_COOLOFF_MINUTES (the pages and the admin).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("HERMES_OPS_LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("HERMES_OPS_LOGIN_COOLOFF_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "project.pages.login_locked_out"
AXES_VERBOSE = False
# The client address is settled once, by project.proxies (never from a header a caller sets).
AXES_CLIENT_IP_CALLABLE = "project.proxies.request_client_address"
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en"
# The catalogue of strings outside the apps' own folders (templates/) is the project's.
LOCALE_PATHS = [BASE_DIR / "project" / "locale"]
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
USE_I18N = True
TIME_ZONE = "UTC"
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False
X_FRAME_OPTIONS = "DENY"

# --- API conventions (SPEC §2).
MAX_BODY_BYTES = env_int("MAX_BODY_BYTES", 5 * 1024 * 1024, minimum=1024)
MAX_JSON_DEPTH = 64
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_BODY_BYTES
# A refused body is read and thrown away up to this many bytes before the 413,
# so a client still sending gets the answer rather than a reset connection.
MAX_BODY_DISCARD_BYTES = env_int("MAX_BODY_DISCARD_BYTES", max(64 * 1024 * 1024, 4 * MAX_BODY_BYTES), minimum=0)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "project.authentication.TokenAuthentication",  # first: an anonymous API call gets 401
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["project.api.EnvelopeJSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["project.api.StrictJSONParser"],
    "DEFAULT_PAGINATION_CLASS": "project.api.Pagination",
    "PAGE_SIZE": 50,
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "EXCEPTION_HANDLER": "project.api.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "project.schema.EnvelopeAutoSchema",
    "DATETIME_FORMAT": "iso-8601",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}

REST_KNOX = {
    "AUTH_HEADER_PREFIX": "Token",
    "TOKEN_TTL": None,
    "AUTO_REFRESH": False,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Hermes Ops API",
    "DESCRIPTION": (
        "Error patterns, run recording and the internal context query of Hermes Ops. "
        "Every body is the envelope {code, message, data}; code equals the HTTP status."
    ),
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI and Redoc from drf-spectacular-sidecar's static files (whitenoise
    # serves them), not from a CDN: the docs page works offline and is pinned.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "RunStatusEnum": "contextquery.models.RunStatus",
        "VisitStatusEnum": "contextquery.models.VisitStatus",
        "CompletionStatusEnum": "contextquery.judgement.COMPLETION_STATUSES",
        "FinishStatusEnum": "contextquery.recording.FINISH_STATUSES",
    },
    # The internal context endpoints authenticate with this header only (SPEC §4.5).
    "APPEND_COMPONENTS": {
        "securitySchemes": {"ContextToken": {"type": "apiKey", "in": "header", "name": "X-Context-Token"}}
    },
}

# --- Error patterns (SPEC §3.3).
PATTERNS_SCAN_CHARS = env_int("PATTERNS_SCAN_CHARS", 500, minimum=1)
# The tail catches an error appended after a partial answer. It must hold the whole of
# the longest hermes-agent text that can end a reply: the reasoning-timeout guidance
# (about 760 characters; the billing guidance is about 310, "⚠️ No reply: …" 215).
# `make bench` shows the built-ins' precision unchanged from 0 to 5,000.
PATTERNS_SCAN_TAIL_CHARS = env_int("PATTERNS_SCAN_TAIL_CHARS", 800, minimum=0)
# The learned second signal (SPEC §3.3a): on unless switched off; its threshold is the stored
# model's (chosen leave-source-out by train_detector) unless set here.
HERMES_DETECTION_MODEL = env_bool("HERMES_DETECTION_MODEL", True)
HERMES_DETECTION_MODEL_THRESHOLD = env_probability("HERMES_DETECTION_MODEL_THRESHOLD")

# --- Context query (SPEC §4.5): defaults, each overridden by HERMES_CONTEXT_QUERY_<KEY>.
_CQ_PREFIX = "HERMES_CONTEXT_QUERY_"
HERMES_CONTEXT_QUERY = {
    "ENABLED": env_bool(_CQ_PREFIX + "ENABLED", True),
    "TOKEN_TTL_SECONDS": env_int(_CQ_PREFIX + "TOKEN_TTL_SECONDS", 120, minimum=1),
    "TOKEN_MAX_LIFETIME_SECONDS": env_int(_CQ_PREFIX + "TOKEN_MAX_LIFETIME_SECONDS", 3600, minimum=1),
    "CLEANUP_INTERVAL_SECONDS": env_int(_CQ_PREFIX + "CLEANUP_INTERVAL_SECONDS", 60, minimum=1),
    "MAX_TOKENS_PER_VISIT": env_int(_CQ_PREFIX + "MAX_TOKENS_PER_VISIT", 4, minimum=1),
    "MAX_QUERIES_PER_VISIT": env_int(_CQ_PREFIX + "MAX_QUERIES_PER_VISIT", 50, minimum=1),
    "MAX_BYTES": env_int(_CQ_PREFIX + "MAX_BYTES", 8192, minimum=512, maximum=102400),
    "MAX_VISITS_PER_RUN": env_int(_CQ_PREFIX + "MAX_VISITS_PER_RUN", 200, minimum=1),
    "MAX_GRAPH_NODES": env_int(_CQ_PREFIX + "MAX_GRAPH_NODES", 2000, minimum=1),
    "MAX_GRAPH_EDGES": env_int(_CQ_PREFIX + "MAX_GRAPH_EDGES", 10000, minimum=1),
    "MAX_LOGS_PER_VISIT": env_int(_CQ_PREFIX + "MAX_LOGS_PER_VISIT", 5000, minimum=1),
    "MAX_PATHS": env_int(_CQ_PREFIX + "MAX_PATHS", 100, minimum=1),
    "MAX_PATH_DEPTH": env_int(_CQ_PREFIX + "MAX_PATH_DEPTH", 200, minimum=1),
    # Unset: the address the server was started on (project.serving).
    "BASE_URL": os.environ.get(_CQ_PREFIX + "BASE_URL", "").strip().rstrip("/") or None,
    "ALLOWED_CLIENTS": env_list(_CQ_PREFIX + "ALLOWED_CLIENTS", ["127.0.0.0/8", "::1"]),
}
if HERMES_CONTEXT_QUERY["BASE_URL"] and urlparse(HERMES_CONTEXT_QUERY["BASE_URL"]).scheme not in {"http", "https"}:
    raise ImproperlyConfigured(_CQ_PREFIX + "BASE_URL must be an http:// or https:// URL.")
try:
    import ipaddress

    HERMES_CONTEXT_QUERY["ALLOWED_NETWORKS"] = [
        ipaddress.ip_network(item, strict=False) for item in HERMES_CONTEXT_QUERY["ALLOWED_CLIENTS"]
    ]
except ValueError as exc:
    raise ImproperlyConfigured(f"{_CQ_PREFIX}ALLOWED_CLIENTS has an invalid address or network: {exc}") from None

# --- Behind a reverse proxy (docs/deploy.md): peers whose X-Real-IP header
# names the client. Empty (the default): no header is trusted.
HERMES_OPS_TRUSTED_PROXIES = env_list("HERMES_OPS_TRUSTED_PROXIES", [])
try:
    HERMES_OPS_TRUSTED_PROXY_NETWORKS = [
        ipaddress.ip_network(item, strict=False) for item in HERMES_OPS_TRUSTED_PROXIES
    ]
except ValueError as exc:
    raise ImproperlyConfigured(f"HERMES_OPS_TRUSTED_PROXIES has an invalid address or network: {exc}") from None

# --- Overview, live runs, metrics (SPEC §8).
# A RUNNING run with no sign of life for this long (and no tool call waiting
# for a person) is stale: marked in lists and the API, ended by finish_stale_runs.
HERMES_STALE_RUN_MINUTES = env_int("HERMES_STALE_RUN_MINUTES", 30, minimum=1)
# GET /metrics answers only these addresses or networks (others 403), like /internal/.
HERMES_METRICS_ALLOWED_CLIENTS = env_list("HERMES_METRICS_ALLOWED_CLIENTS", ["127.0.0.0/8", "::1"])
try:
    HERMES_METRICS_ALLOWED_NETWORKS = [
        ipaddress.ip_network(item, strict=False) for item in HERMES_METRICS_ALLOWED_CLIENTS
    ]
except ValueError as exc:
    raise ImproperlyConfigured(f"HERMES_METRICS_ALLOWED_CLIENTS has an invalid address or network: {exc}") from None
# --- Tool gateway (SPEC §7): business tools called server-side for the agent.
# Calls through /internal/tools/call per visit (list and status count against no budget).
HERMES_CONTEXT_QUERY["MAX_TOOL_CALLS_PER_VISIT"] = env_int(_CQ_PREFIX + "MAX_TOOL_CALLS_PER_VISIT", 20, minimum=1)
# host[:port] entries a binding's endpoint may reach; empty: nothing is reachable until ops allow it.
HERMES_TOOL_ALLOWED_HOSTS = env_list("HERMES_TOOL_ALLOWED_HOSTS", [])
try:
    parse_host_list(HERMES_TOOL_ALLOWED_HOSTS)
except ValueError as exc:
    raise ImproperlyConfigured(f"HERMES_TOOL_ALLOWED_HOSTS has an entry that is not host[:port]: {exc}") from None
# A pending call expires this long after it was asked (within a token's lifetime, so the agent reads the answer).
SPECTACULAR_SETTINGS["ENUM_NAME_OVERRIDES"]["ToolCallStatusEnum"] = "contextquery.models.ToolCallStatus"
HERMES_TOOL_APPROVAL_TTL_SECONDS = env_int(
    "HERMES_TOOL_APPROVAL_TTL_SECONDS", 1800, minimum=1, maximum=HERMES_CONTEXT_QUERY["TOKEN_MAX_LIFETIME_SECONDS"]
)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "loggers": {
        "django": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
        "hermes_ops": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    },
}

"""Production settings: secure cookies, HSTS, hosts from the environment, no default secret.

Run behind a TLS-terminating proxy with `gunicorn config.wsgi` (see docs/operations.md).
"""

import os

from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F403
from .base import env_bool, env_float, env_list

DEBUG = False
if not os.environ.get("DJANGO_SECRET_KEY"):
    raise ImproperlyConfigured("DJANGO_SECRET_KEY must be set in production.")
SECRET_KEY = os.environ["DJANGO_SECRET_KEY"]
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", [])
if not ALLOWED_HOSTS:
    raise ImproperlyConfigured(
        "DJANGO_ALLOWED_HOSTS must list the host names this site answers to."
    )

SESSION_COOKIE_SECURE = env_bool("GRAPHLOOM_SECURE_COOKIES", True)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_SSL_REDIRECT = env_bool("GRAPHLOOM_SSL_REDIRECT", True)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_HSTS_SECONDS = int(env_float("GRAPHLOOM_HSTS_SECONDS", 31536000))
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("GRAPHLOOM_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("GRAPHLOOM_HSTS_PRELOAD", False)
# Preloading is hard to undo, so it is opt-in; without it, say so once here, not at every check.
SILENCED_SYSTEM_CHECKS = [] if SECURE_HSTS_PRELOAD else ["security.W021"]
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
# Health checks from the orchestrator come over plain HTTP on the internal network.
SECURE_REDIRECT_EXEMPT = [r"^api/v1/health$"]

"""Test settings: the same embedded PostgreSQL (or DATABASE_URL), faster hashing, no DEBUG."""

from .base import *  # noqa: F403
from .base import STORAGES

DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Tests render templates without running collectstatic first.
STORAGES = {
    **STORAGES,
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
# Tasks run where the test says: tests that need a worker start a real one.

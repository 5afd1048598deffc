"""Writes of the system app."""

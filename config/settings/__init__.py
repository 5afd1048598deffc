"""Settings modules: base (development defaults), test, production."""

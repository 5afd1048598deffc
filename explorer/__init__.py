"""The browser UI: first run, sign-in, dashboard; later the graph page, panels, curation."""

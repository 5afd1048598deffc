"""The renderer's pieces that need no browser (ingest/crawler/render.py): what counts as the
page's own origin, and how a missing Chromium is found and said."""

from __future__ import annotations

from ingest.crawler.render import chromium_executable, origin, unavailable_reason


def test_an_origin_is_scheme_host_and_port():
    page = origin("http://docs.example.org/guide/")
    assert origin("http://DOCS.example.org:80/app.js?v=2") == page
    assert origin("https://docs.example.org/app.js") != page
    assert origin("http://docs.example.org:8080/app.js") != page
    assert origin("http://cdn.docs.example.org/app.js") != page
    assert origin("http://example.org/app.js") != page


def test_a_missing_chromium_is_named_in_the_refusal(tmp_path, monkeypatch):
    missing = str(tmp_path / "chromium")
    assert chromium_executable(missing) is None
    assert unavailable_reason(missing) == (
        f"no Chromium at {missing!r} (GRAPHLOOM_CHROMIUM), so pages cannot be rendered."
    )
    not_executable = tmp_path / "not-a-browser"
    not_executable.write_text("")
    assert chromium_executable(str(not_executable)) is None
    assert "no Chromium at 'no-such-browser'" in unavailable_reason("no-such-browser")
    monkeypatch.setenv("PATH", str(tmp_path))
    assert unavailable_reason("").startswith("no `chromium-headless-shell` or `chromium` on PATH")


def executable(path):
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return str(path)


def test_without_a_setting_the_headless_shell_is_preferred_to_the_full_browser(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("PATH", str(tmp_path))
    full = executable(tmp_path / "chromium")
    assert chromium_executable("") == full
    shell = executable(tmp_path / "chromium-headless-shell")
    assert chromium_executable("") == shell
    # A configured binary wins, by name or by path.
    assert chromium_executable("chromium") == full
    assert chromium_executable(full) == full
    assert unavailable_reason("") == ""

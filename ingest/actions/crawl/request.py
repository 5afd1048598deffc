"""A crawl as a person or a client asks for one, checked field by field, and the settings
the crawl keeps on its source (`Source.settings`): what the create actions write and what
every run of the loop reads back."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Required, TypedDict, Unpack

from django.conf import settings

from ingest.crawler.durations import DurationError, format_duration, parse_duration
from ingest.crawler.render import unavailable_reason
from ingest.crawler.urls import normalize_url
from ingest.models import Source, SourceKind
from workspaces.errors import InvalidInput, PermissionDenied
from workspaces.models import Role

MODES = {"single": SourceKind.URL, "sitemap": SourceKind.SITEMAP, "recursive": SourceKind.CRAWL}


@dataclass(frozen=True, slots=True)
class CrawlSettings:
    url: str
    mode: str
    max_pages: int = 500
    max_depth: int = 3
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    rate: float | None = None  # requests/s per host; None: CRAWL_RATE_PER_HOST; 0: no limit
    include_subdomains: bool = False
    use_llms_txt: bool = True
    # Load pages that seem to need JavaScript in headless Chromium (ingest/crawler/render.py).
    render: bool = False

    def as_json(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "mode": self.mode,
            "max_pages": self.max_pages,
            "max_depth": self.max_depth,
            "allow": list(self.allow),
            "deny": list(self.deny),
            "rate": self.rate,
            "include_subdomains": self.include_subdomains,
            "use_llms_txt": self.use_llms_txt,
            "render": self.render,
        }

    @classmethod
    def from_source(cls, source: Source) -> CrawlSettings:
        data = source.settings
        return cls(
            url=data["url"],
            mode=data["mode"],
            max_pages=int(data.get("max_pages", 500)),
            max_depth=int(data.get("max_depth", 3)),
            allow=tuple(data.get("allow", ())),
            deny=tuple(data.get("deny", ())),
            rate=data.get("rate"),
            include_subdomains=bool(data.get("include_subdomains", False)),
            use_llms_txt=bool(data.get("use_llms_txt", True)),
            render=bool(data.get("render", False)),
        )


class CrawlRequest(TypedDict, total=False):
    """A crawl as a person or a client asks for one, before `validate_crawl_settings`."""

    url: Required[str]
    mode: Required[str]
    max_pages: int | None
    max_depth: int | None
    allow: Iterable[str]
    deny: Iterable[str]
    rate: float | None  # requests/s per host; None: CRAWL_RATE_PER_HOST; 0: no limit
    include_subdomains: bool
    use_llms_txt: bool
    render: bool


def validate_crawl_settings(**request: Unpack[CrawlRequest]) -> CrawlSettings:
    """Check a crawl request field by field; InvalidInput names the field at fault."""
    url, mode, rate = request["url"], request["mode"], request.get("rate")
    max_pages, max_depth = request.get("max_pages"), request.get("max_depth")
    allow, deny = tuple(request.get("allow", ())), tuple(request.get("deny", ()))
    if mode not in MODES:
        raise InvalidInput(f"mode: choose one of {', '.join(MODES)} (got {mode!r}).")
    normalized = normalize_url(url.strip()) if url else None
    if not normalized:
        raise InvalidInput(f"url: {url!r} is not an http(s) URL.")
    if max_pages is not None and not 1 <= max_pages <= 1_000_000:
        raise InvalidInput("max_pages: must be between 1 and 1,000,000.")
    if max_depth is not None and not 0 <= max_depth <= 100:
        raise InvalidInput("max_depth: must be between 0 and 100.")
    if rate is not None and rate < 0:
        raise InvalidInput("rate: requests per second cannot be negative (0 turns the limit off).")
    for name, patterns in (("allow", allow), ("deny", deny)):
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise InvalidInput(
                    f"{name}: {pattern!r} is not a valid regular expression ({exc})."
                ) from None
    render = bool(request.get("render", False))
    if render:
        why = unavailable_reason(settings.CRAWL_CHROMIUM)
        if why:
            raise InvalidInput(f"render: {why} Crawl without render.")
    return CrawlSettings(
        url=normalized,
        mode=mode,
        max_pages=max_pages or (1 if mode == "single" else 500),
        max_depth=3 if max_depth is None else max_depth,
        allow=allow,
        deny=deny,
        rate=rate,
        include_subdomains=request.get("include_subdomains", False),
        use_llms_txt=request.get("use_llms_txt", True),
        render=render,
    )


def admin_only_reason(crawl: CrawlSettings) -> str:
    """Why only the workspace's admins may start this crawl, or "" when an editor may: more
    pages than CRAWL_ADMIN_ONLY_ABOVE_PAGES, or the rate limit turned off (rate 0)."""
    limit = settings.CRAWL_ADMIN_ONLY_ABOVE_PAGES
    reasons = []
    if crawl.max_pages > limit:
        reasons.append(
            f"max_pages {crawl.max_pages:,} is above {limit:,} (CRAWL_ADMIN_ONLY_ABOVE_PAGES)"
        )
    if crawl.rate is not None and crawl.rate <= 0:
        reasons.append("rate 0 turns the rate limit off")
    return "; ".join(reasons)


def check_crawl_role(crawl: CrawlSettings, role: str | None) -> None:
    """PermissionDenied (403) naming the limit when a member below admin asks for a crawl
    only admins may start (`admin_only_reason`). `role` None: the operator's own command
    line, which no workspace role limits."""
    if role is None or Role.rank(role) >= Role.rank(Role.ADMIN):
        return
    reason = admin_only_reason(crawl)
    if reason:
        raise PermissionDenied(
            f"Only a workspace admin may start this crawl: {reason}. You are {role}: keep "
            f"max_pages at {settings.CRAWL_ADMIN_ONLY_ABOVE_PAGES:,} or fewer and a rate "
            "limit above 0, or ask an admin."
        )


def validate_refresh_every(value: object, *, field: str = "refresh_every") -> int:
    """A refresh interval as a person or a client gives it (seconds, or "30m", "6h", "1d",
    "2w"; 0, "off" or "never" for none), in seconds, 0 meaning off. Shorter than
    CRAWL_REFRESH_MIN_SECONDS or not a duration: InvalidInput naming `field`."""
    try:
        seconds = parse_duration(value)
    except DurationError as exc:
        raise InvalidInput(f"{field}: {exc}") from None
    floor = settings.CRAWL_REFRESH_MIN_SECONDS
    if 0 < seconds < floor:
        raise InvalidInput(
            f"{field}: at least {format_duration(floor)} between re-crawls "
            f"(CRAWL_REFRESH_MIN_SECONDS); got {format_duration(seconds)}."
        )
    return seconds

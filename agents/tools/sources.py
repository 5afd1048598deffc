"""Sources: `list_sources` and `source_status` (reads), and `add_text`, `add_url` and
`crawl` (editor role), which create sources through the actions the API, the sources
screen and the commands share — `do_create_text_source` and `do_create_crawl`, so the
crawl limits (above CRAWL_ADMIN_ONLY_ABOVE_PAGES pages, admins only: the token's user's
role decides) and the fetcher's SSRF guard (private and loopback addresses refused unless
CRAWL_ALLOWED_NETWORKS opens them) hold exactly as there. Each write answers the source it
started and how to follow it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from django.urls import reverse
from pydantic import Field

from agents.access import Access
from agents.results import ToolAnswer
from agents.tools.base import Arguments, ToolSpec, paged
from ingest.actions.crawl import do_create_crawl
from ingest.actions.sources import do_create_text_source
from ingest.models import Source, SourceStatus
from ingest.schemas import SourceDetailOut, SourceOut
from ingest.selectors import (
    get_duplicate_documents,
    get_failed_documents,
    get_failures,
    get_source_for_workspace,
    get_sources,
    with_figures,
)
from workspaces.models import MAX_ID, Role

MAX_LIST = 100
# Failures listed with a source's status (crawl pages, then documents).
MAX_FAILURES = 20
Tags = list[Annotated[str, Field(max_length=100)]]


def source_out(source: Source) -> dict[str, Any]:
    return SourceOut.model_validate(source).model_dump(mode="json")


def follow(access: Access, source: Source) -> dict[str, Any]:
    """Where to watch a source: its page in the browser, its API resource, and the tool
    call that polls it."""
    slug = access.workspace.slug
    page = reverse("explorer:source_detail", args=[source.pk]) + f"?ws={slug}"
    api = f"/api/v1/workspaces/{slug}/sources/{source.pk}"
    return {
        "status_url": access.base_url + page,
        "api_url": access.base_url + api,
        "poll": {"tool": "source_status", "arguments": {"source_id": source.pk}},
        "finished": source.is_finished,
    }


class ListSourcesArguments(Arguments):
    status: Literal["queued", "running", "done", "failed", "cancelled", "deleting"] | None = Field(
        None, description="Only sources in this state."
    )
    limit: int = Field(20, ge=1, le=MAX_LIST)
    offset: int = Field(0, ge=0, le=MAX_ID)


def run_list_sources(access: Access, args: ListSourcesArguments) -> ToolAnswer:
    sources = get_sources(access.workspace)
    if args.status:
        sources = sources.filter(status=args.status)
    page = [source_out(s) for s in with_figures(sources[args.offset : args.offset + args.limit])]
    return ToolAnswer(data=paged(page, count=sources.count(), limit=args.limit, offset=args.offset))


class SourceStatusArguments(Arguments):
    source_id: int = Field(..., ge=1, le=MAX_ID, description="A source id.")


def run_source_status(access: Access, args: SourceStatusArguments) -> ToolAnswer:
    source = get_source_for_workspace(access.workspace, args.source_id)
    detail = SourceDetailOut.model_validate(
        {
            **source_out(source),
            "failed": get_failed_documents(source),
            "duplicates": get_duplicate_documents(source),
        }
    ).model_dump(mode="json")
    failures = get_failures(source)
    return ToolAnswer(
        data={
            **detail,
            "failures": failures[:MAX_FAILURES],
            "failure_count": len(failures),
            "follow": follow(access, source),
        }
    )


class AddTextArguments(Arguments):
    text: str = Field(
        ..., min_length=1, description="The note or document text (Markdown welcome)."
    )
    title: str = Field("", max_length=300, description="The document's title.")
    name: str = Field("", max_length=300, description="The source's name (default: the title).")
    tags: Tags = Field(default_factory=list, max_length=50)


def run_add_text(access: Access, args: AddTextArguments) -> ToolAnswer:
    source, _ = do_create_text_source(
        workspace=access.workspace,
        title=args.title,
        text=args.text,
        name=args.name,
        tags=args.tags,
        created_by=access.user,
    )
    source.refresh_from_db()
    return _started(access, source, f"Text source {source.pk} created; processing has started.")


# As the API's crawl `render` (ingest/schemas.py): validated by the same action.
Render = Annotated[
    bool,
    Field(
        description="Load pages that seem to need JavaScript in headless Chromium (same "
        "address guard, robots.txt and rate limit; no other origin's requests). Refused "
        "when the server has no Chromium."
    ),
]


class AddUrlArguments(Arguments):
    url: str = Field(..., min_length=1, max_length=2048, description="An http(s) page.")
    render: Render = False
    name: str = Field("", max_length=300, description="The source's name (default: the URL).")
    tags: Tags = Field(default_factory=list, max_length=50)


def run_add_url(access: Access, args: AddUrlArguments) -> ToolAnswer:
    source = do_create_crawl(
        workspace=access.workspace,
        url=args.url,
        mode="single",
        render=args.render,
        name=args.name,
        tags=args.tags,
        created_by=access.user,
        role=access.role,
    )
    return _started(access, source, f"Fetching {source.origin} as source {source.pk}.")


class CrawlArguments(Arguments):
    url: str = Field(
        ..., min_length=1, max_length=2048, description="The start page, or the sitemap's URL."
    )
    mode: Literal["recursive", "sitemap"] = Field(
        "recursive", description="recursive: follow links from the start page within the "
        "site; sitemap: every page the sitemap lists.",
    )  # fmt: skip
    max_pages: int | None = Field(None, ge=1, le=1_000_000, description="Default 500.")
    max_depth: int | None = Field(
        None, ge=0, le=100, description="Links followed from the start page (default 3)."
    )
    allow: list[Annotated[str, Field(max_length=500)]] = Field(
        default_factory=list, max_length=50, description="Regular expressions a URL must match."
    )
    deny: list[Annotated[str, Field(max_length=500)]] = Field(
        default_factory=list, max_length=50, description="Regular expressions excluding URLs."
    )
    include_subdomains: bool = False
    render: Render = False
    topic: str | None = Field(
        None,
        max_length=1000,
        description="What the site's pages should be about (words or a sentence): pages "
        "that are not are kept but not extracted into the graph.",
    )
    name: str = Field("", max_length=300)
    tags: Tags = Field(default_factory=list, max_length=50)


def run_crawl(access: Access, args: CrawlArguments) -> ToolAnswer:
    source = do_create_crawl(
        workspace=access.workspace,
        url=args.url,
        mode=args.mode,
        max_pages=args.max_pages,
        max_depth=args.max_depth,
        allow=args.allow,
        deny=args.deny,
        include_subdomains=args.include_subdomains,
        render=args.render,
        topic=args.topic,
        name=args.name,
        tags=args.tags,
        created_by=access.user,
        role=access.role,
    )
    return _started(access, source, f"Crawling {source.origin} as source {source.pk}.")


def _started(access: Access, source: Source, message: str) -> ToolAnswer:
    data = {
        "message": message + " Poll source_status until `finished` is true.",
        "source": source_out(source),
        "follow": follow(access, source),
    }
    return ToolAnswer(data=data)


_WRITE_NOTE = (
    " Needs the editor role. Processing (parsing, chunking, embedding, extraction) runs in "
    "the background: the answer gives the source id and `follow.poll`, the source_status "
    "call that reports progress."
)

TOOLS = [
    ToolSpec(
        name="list_sources",
        title="List sources",
        description=(
            "The workspace's sources (uploads, texts, crawls), newest first, with status "
            f"({', '.join(SourceStatus.values)}) and counters, a page at a time."
        ),
        arguments=ListSourcesArguments,
        run=run_list_sources,
    ),
    ToolSpec(
        name="source_status",
        title="Source status",
        description=(
            "One source's progress: status, stage, counters (documents done/failed/pending; "
            "pages_* for crawls), failed documents and failed crawl pages with the reason "
            "(e.g. ssrf_refused for a private address), and `follow.finished`."
        ),
        arguments=SourceStatusArguments,
        run=run_source_status,
    ),
    ToolSpec(
        name="add_text",
        title="Add a note or document text",
        description="Adds text (a note, a document's text) as a new text source." + _WRITE_NOTE,
        arguments=AddTextArguments,
        run=run_add_text,
        role=Role.EDITOR,
    ),
    ToolSpec(
        name="add_url",
        title="Add one web page",
        description=(
            "Fetches one web page (http or https) into a new source, politely (robots.txt, "
            "rate limits); private and loopback addresses are refused." + _WRITE_NOTE
        ),
        arguments=AddUrlArguments,
        run=run_add_url,
        role=Role.EDITOR,
        open_world=True,
    ),
    ToolSpec(
        name="crawl",
        title="Crawl a site or sitemap",
        description=(
            "Crawls a site from a start page (following links within the site, up to "
            "`max_pages` and `max_depth`) or every page of a sitemap, into a new source; "
            "robots.txt and rate limits are respected and private addresses refused." + _WRITE_NOTE
        ),
        arguments=CrawlArguments,
        run=run_crawl,
        role=Role.EDITOR,
        open_world=True,
    ),
]

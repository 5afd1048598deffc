"""Forms of the sources screens: the crawl form, and the per-file check of an upload.

Both only parse and check; the rules themselves belong to ingest and are called, not
copied: a crawl request is judged by `validate_crawl_settings` (the same function behind the
API's crawl creation), and an upload by the same size limits and the same format detection
the API's upload uses. The difference from the API is in how problems are reported: the API
refuses a whole request with one message, while a person dropping ten files wants the nine
good ones taken and to be told, file by file, what is wrong with the tenth. (An empty file
is refused here too, where the API stores it as a failed document: said at once, it is
clearer.)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django import forms
from django.conf import settings
from django.core.files.uploadedfile import UploadedFile

from explorer.forms import FocusFirstProblemMixin
from ingest.actions.crawl import (
    CrawlRequest,
    CrawlSettings,
    validate_crawl_settings,
    validate_refresh_every,
)
from ingest.crawler.durations import format_duration
from ingest.parsers import detect_upload_format
from ingest.parsers.base import ParseError, UnsupportedFormat
from workspaces.errors import InvalidInput

MODE_CHOICES = [
    ("single", "Single URL"),
    ("sitemap", "Sitemap"),
    ("recursive", "Same-site recursive"),
]


def split_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def split_tags(text: str) -> list[str]:
    return [tag.strip() for tag in text.split(",") if tag.strip()]


def _refresh_field() -> forms.CharField:
    return forms.CharField(
        required=False,
        max_length=40,
        label="Re-crawl every",
        help_text="30m, 6h, 1d or 2w; empty: no schedule. Counted from the end of each run.",
        widget=forms.TextInput(attrs={"placeholder": "1d", "spellcheck": "false"}),
    )


def _clean_refresh(value: str) -> int:
    """Seconds between re-crawls, 0 for none, as `validate_refresh_every` judges them."""
    if not value.strip():
        return 0
    try:
        return validate_refresh_every(value)
    except InvalidInput as exc:
        _, _, message = exc.message.partition(": ")
        raise forms.ValidationError(message[:1].upper() + message[1:]) from None


class RefreshForm(FocusFirstProblemMixin):
    """A crawl's schedule on its page: the interval between re-crawls, or none."""

    autofocus_first_field = False

    refresh_every = _refresh_field()

    def __init__(self, *args: Any, every: int | None = None, **kwargs: Any) -> None:
        if every and not args and "data" not in kwargs:
            kwargs.setdefault("initial", {"refresh_every": format_duration(every)})
        super().__init__(*args, **kwargs)

    def clean_refresh_every(self) -> int:
        return _clean_refresh(self.cleaned_data.get("refresh_every") or "")


class CrawlForm(FocusFirstProblemMixin):
    """A crawl request. Field ranges repeat the API schema's; `clean` then hands the request
    to `validate_crawl_settings`, whose "field: problem" messages are put next to the field
    they name."""

    autofocus_first_field = False

    mode = forms.ChoiceField(
        choices=MODE_CHOICES,
        initial="recursive",
        widget=forms.RadioSelect,
        label="What to crawl",
        help_text="One page; every page a sitemap lists; or the site's pages reached by links.",
    )
    url = forms.CharField(
        max_length=2048,
        label="URL",
        help_text="The page to start from, or the sitemap's address (http or https).",
        widget=forms.URLInput(attrs={"placeholder": "https://example.org/", "spellcheck": "false"}),
    )
    max_pages = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=1_000_000,
        label="Max pages",
        help_text="Default 500 (1 for a single URL).",
    )
    max_depth = forms.IntegerField(
        required=False,
        min_value=0,
        max_value=100,
        label="Max depth",
        help_text="Links followed from the start page; default 3.",
    )
    rate = forms.FloatField(
        required=False,
        min_value=0,
        label="Rate (requests per second)",
        help_text="Per host; empty: the server's default; 0: no limit. robots.txt still applies.",
    )
    allow = forms.CharField(
        required=False,
        label="Include patterns",
        help_text="Regular expressions, one per line; when given, a URL must match one.",
        widget=forms.Textarea(attrs={"rows": 2, "spellcheck": "false"}),
    )
    deny = forms.CharField(
        required=False,
        label="Exclude patterns",
        help_text="Regular expressions, one per line; a URL matching any is skipped.",
        widget=forms.Textarea(attrs={"rows": 2, "spellcheck": "false"}),
    )
    include_subdomains = forms.BooleanField(required=False, label="Include subdomains")
    use_llms_txt = forms.BooleanField(
        required=False, initial=True, label="Read llms.txt when the site has one"
    )
    name = forms.CharField(
        required=False, max_length=300, label="Name", help_text="Defaults to the URL."
    )
    tags = forms.CharField(
        required=False, max_length=500, label="Tags", help_text="Comma-separated."
    )
    refresh_every = _refresh_field()

    crawl_settings: CrawlSettings | None = None

    def clean_refresh_every(self) -> int:
        return _clean_refresh(self.cleaned_data.get("refresh_every") or "")

    # validate_crawl_settings names the field at fault first ("field: problem") and stops
    # at the first problem; a field already found at fault is replaced by a harmless value
    # and the check repeated, so every problem is reported at once, each next to its field.
    _NEUTRAL: dict[str, Any] = {
        "url": "https://example.org/",
        "mode": "recursive",
        "max_pages": None,
        "max_depth": None,
        "rate": None,
        "allow": "",
        "deny": "",
    }

    @staticmethod
    def _request(values: dict[str, Any]) -> CrawlRequest:
        """The form's values as `validate_crawl_settings` and `do_create_crawl` take them."""
        return {
            "url": values.get("url", ""),
            "mode": values.get("mode", ""),
            "max_pages": values.get("max_pages"),
            "max_depth": values.get("max_depth"),
            "allow": split_lines(values.get("allow", "")),
            "deny": split_lines(values.get("deny", "")),
            "rate": values.get("rate"),
            "include_subdomains": bool(values.get("include_subdomains")),
            "use_llms_txt": bool(values.get("use_llms_txt")),
        }

    def crawl_request(self) -> CrawlRequest:
        """The crawl asked for, to hand to `do_create_crawl` once the form is valid."""
        return self._request(self.cleaned_data)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        while True:
            values = {**data, **{k: v for k, v in self._NEUTRAL.items() if k in self.errors}}
            try:
                crawl = validate_crawl_settings(**self._request(values))
            except InvalidInput as exc:
                name, _, message = exc.message.partition(": ")
                if name not in self._NEUTRAL or name in self.errors or not message:
                    self.add_error(None, exc.message)
                    return data
                self.add_error(name, message[:1].upper() + message[1:])
            else:
                if not self.errors:
                    self.crawl_settings = crawl
                return data


@dataclass(frozen=True, slots=True)
class FileProblem:
    name: str
    message: str


@dataclass(slots=True)
class UploadCheck:
    """Which files to take and what is wrong with the others; `refused` is a problem with
    the request as a whole (nothing chosen, too much at once)."""

    accepted: list[UploadedFile] = field(default_factory=list)
    problems: list[FileProblem] = field(default_factory=list)
    refused: str = ""


def check_uploads(files: list[UploadedFile], *, request_bytes: int) -> UploadCheck:
    """The API's upload rules, applied file by file: the per-request and per-file size
    limits, and the format detection that knows empty files and unsupported types."""
    if request_bytes > settings.INGEST_MAX_REQUEST_BYTES:
        return UploadCheck(
            refused=f"That is {request_bytes / 1e6:.1f} MB at once; one upload may carry at most "
            f"{settings.INGEST_MAX_REQUEST_BYTES / 1e6:.0f} MB. Upload the files in several goes."
        )
    if not files:
        return UploadCheck(refused="Choose or drop at least one file.")
    check = UploadCheck()
    limit = settings.INGEST_MAX_FILE_BYTES
    for upload in files:
        name = upload.name or "upload"
        if upload.size is not None and upload.size > limit:
            check.problems.append(
                FileProblem(
                    name,
                    f"Too large: {upload.size / 1e6:.1f} MB; the limit is "
                    f"{limit / 1e6:.0f} MB per file.",
                )
            )
            continue
        try:
            detect_upload_format(upload, filename=name)
        except UnsupportedFormat as exc:
            check.problems.append(FileProblem(name, f"Unsupported type: {exc.message}"))
            continue
        except ParseError as exc:  # the only other refusal before parsing: an empty file
            check.problems.append(FileProblem(name, exc.message))
            continue
        check.accepted.append(upload)
    return check

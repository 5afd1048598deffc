"""Forms of the sources screens: the crawl form, the per-file check of an upload, the
paste-text form and the list's filter bar.

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
from ingest.models import SourceKind, SourceStatus
from ingest.parsers import detect_upload_format
from ingest.parsers.base import ParseError, UnsupportedFormat
from workspaces.errors import InvalidInput

MODE_CHOICES = [
    ("single", "Single URL"),
    ("sitemap", "Sitemap"),
    ("recursive", "Same-site recursive"),
]


# The known-only option, worded once for the upload and crawl forms (SOURCE_OPTIONS).
KNOWN_ONLY_LABEL = "Only add evidence for entities already known"
KNOWN_ONLY_HELP = (
    "No new entities: passages that name none of the workspace's entities or aliases are "
    "not even sent to the extractor."
)


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
    # Not `render`: that is the form's own method. The API field and the option are `render`.
    render_javascript = forms.BooleanField(
        required=False,
        label="Render pages that need JavaScript",
        help_text="Pages that seem to need JavaScript are loaded in headless Chromium "
        "(only the site's own requests; slower).",
    )
    topic = forms.CharField(
        required=False,
        max_length=1000,
        label="Topic (optional)",
        help_text="What the pages should be about, in words or a sentence. Pages that are not "
        "are kept and searchable, but not extracted into the graph.",
        widget=forms.TextInput(attrs={"autocomplete": "off"}),
    )
    known_only = forms.BooleanField(
        required=False,
        label=KNOWN_ONLY_LABEL,
        help_text=KNOWN_ONLY_HELP,
    )
    name = forms.CharField(
        required=False, max_length=300, label="Name", help_text="Defaults to the URL."
    )
    tags = forms.CharField(
        required=False, max_length=500, label="Tags", help_text="Comma-separated."
    )
    refresh_every = _refresh_field()

    crawl_settings: CrawlSettings | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The limit only admins may pass (ingest/actions/crawl/request.py, check_crawl_role).
        limit = settings.CRAWL_ADMIN_ONLY_ABOVE_PAGES
        self.fields["max_pages"].help_text += f" Above {limit:,}, admins only."
        self.fields["rate"].help_text += " Rate 0: admins only."

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
        "render_javascript": False,
    }
    # Fields whose name differs from the request field validate_crawl_settings names.
    _FIELD_OF: dict[str, str] = {"render": "render_javascript"}

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
            "render": bool(values.get("render_javascript")),
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
                name = self._FIELD_OF.get(name, name)
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


class PasteTextForm(FocusFirstProblemMixin):
    """A note pasted into the page: it becomes a text source (`do_create_text_source`, as
    the API's JSON text source does). The text is bounded by INGEST_MAX_PASTE_CHARS, said
    next to the field rather than cut by the browser (no `maxlength` on the text area: a
    browser truncates a paste silently); the page's script says it before sending, since a
    request beyond DATA_UPLOAD_MAX_MEMORY_SIZE is refused before any view reads it."""

    autofocus_first_field = False
    prefix = "paste"  # the crawl form on the same page has a `tags` field too

    title = forms.CharField(
        max_length=300,
        label="Title",
        help_text="Names the note and its source.",
        error_messages={"required": "Give the note a title."},
        widget=forms.TextInput(attrs={"autocomplete": "off"}),
    )
    text = forms.CharField(
        label="Text",
        help_text="Plain text or Markdown.",
        error_messages={"required": "Paste some text."},
        widget=forms.Textarea(attrs={"rows": 6}),
    )
    tags = forms.CharField(
        required=False, max_length=500, label="Tags", help_text="Comma-separated."
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        limit = settings.INGEST_MAX_PASTE_CHARS
        self.fields["text"].help_text = f"Plain text or Markdown, up to {limit:,} characters."
        self.fields["text"].widget.attrs["data-max-chars"] = str(limit)

    def clean_text(self) -> str:
        text = str(self.cleaned_data["text"]).replace("\r\n", "\n")
        limit = settings.INGEST_MAX_PASTE_CHARS
        if len(text) > limit:
            raise forms.ValidationError(
                f"The text is {len(text):,} characters; at most {limit:,} can be pasted at "
                "once. Split it, or upload it as a file."
            )
        return text


ANY = ("", "Any")


class SourceFilterForm(forms.Form):
    """The sources list's filter bar: a tag the source carries, its kind, its status. The
    tags offered are the workspace's (`tag_choices`); a value the list does not know is
    said next to its field and left out of the filter."""

    tag = forms.ChoiceField(required=False, label="Tag")
    kind = forms.ChoiceField(required=False, label="Kind", choices=[ANY, *SourceKind.choices])
    status = forms.ChoiceField(required=False, label="Status", choices=[ANY, *SourceStatus.choices])

    def __init__(self, data: Any, *, tag_choices: list[str]) -> None:
        super().__init__(data, auto_id="filter-%s")
        wanted = str(self.data.get("tag", "") or "")
        # A tag asked for but not among the first offered is offered too, if it can be one.
        takes = 0 < len(wanted) <= 50 and wanted.isprintable()
        tags = sorted({*tag_choices, *([wanted] if takes else [])})
        tag = self.fields["tag"]
        assert isinstance(tag, forms.ChoiceField)
        tag.choices = [ANY, *((t, t) for t in tags)]

    def filters(self) -> dict[str, str]:
        """The valid filters (for `validate_source_filters`); invalid ones are left out."""
        self.is_valid()
        data = getattr(self, "cleaned_data", {})
        return {name: str(data.get(name) or "") for name in self.fields if name not in self.errors}

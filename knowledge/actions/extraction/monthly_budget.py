"""The workspace's monthly LLM budget, as extraction keeps it.

A workspace's LLM calls of every purpose may cost so much in a calendar month
(`workspaces.selectors.llm_monthly_budget`: its admins' amount, else
LLM_WORKSPACE_MONTHLY_BUDGET_USD; none when 0), summed by the one "spent this month"
selector (knowledge/selectors/llm_usage.py). The LLM extractor asks `MonthlyBudget.spent_out`
before sending each window (knowledge/actions/extraction/runs.py): once the month's calls
have cost the budget, no further window goes out (those in flight finish and are paid
for), and the documents left with windows unsent wait where they are, embedded, still
pending (the stage reports them `waiting`: ingest/actions/pipeline.py). The source's
extraction account says `paused` and the source carries the reason as its warning: a
pause, not a failure.

Extraction goes on when the wait is over: a workspace admin raising the budget
(`do_set_workspace_llm_budget`, the workspace page and PATCH /workspaces/{slug}/llm-budget)
queues the paused sources' waiting documents at once; otherwise the `stranded_work` upkeep
job queues them again every UPKEEP_STRANDED_AFTER seconds, and they go on when the month
has turned (a check costs one query before any window is built).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from django.db import transaction

from ingest.actions.slices import do_requeue_waiting_work
from ingest.models import Source
from knowledge.models import ExtractionStatus, SourceExtraction
from knowledge.selectors.llm_usage import month_start, spent_this_month
from workspaces.actions.workspaces import do_set_llm_monthly_budget
from workspaces.models import Workspace
from workspaces.selectors import llm_monthly_budget

# Every pause message starts so: a source's warning that does is cleared when it resumes.
PAUSED_PREFIX = "Paused: the workspace's monthly LLM budget"


@dataclass(frozen=True, slots=True)
class MonthlyBudget:
    """One workspace's monthly LLM budget (None: no limit) and what it has spent."""

    workspace: Workspace
    limit: Decimal | None

    @classmethod
    def of(cls, workspace: Workspace) -> MonthlyBudget:
        return cls(workspace=workspace, limit=llm_monthly_budget(workspace))

    def spent(self) -> Decimal:
        return spent_this_month(self.workspace)

    def spent_out(self) -> bool:
        """The month's LLM calls have cost the whole budget: send no further window."""
        return self.limit is not None and self.spent() >= self.limit

    def pause_message(self) -> str:
        return (
            f"{PAUSED_PREFIX} ({self.limit:,.2f} USD) is spent: {self.spent():,.4f} USD used "
            f"since {month_start():%Y-%m-%d}. Its documents wait for extraction; it goes on "
            "when a workspace admin raises the budget on the workspace page, or when the "
            "month turns."
        )


def do_pause_extraction(*, source: Source, message: str) -> None:
    """Say on the source's extraction account and on the source that extraction waits for
    the budget (a warning: the source is not failed, its documents stay pending)."""
    with transaction.atomic():
        account, _ = SourceExtraction.objects.get_or_create(
            source=source, defaults={"workspace_id": source.workspace_id}
        )
        if account.status != ExtractionStatus.FAILED:
            SourceExtraction.objects.filter(pk=account.pk).update(
                status=ExtractionStatus.PAUSED, message=message[:2000]
            )
        Source.objects.filter(pk=source.pk).update(warning=message[:2000])


def do_clear_pause(*, source: Source) -> None:
    """Extraction of the source goes on: its account runs again and the pause's warning
    goes (any other warning stays)."""
    SourceExtraction.objects.filter(source=source, status=ExtractionStatus.PAUSED).update(
        status=ExtractionStatus.RUNNING, message=""
    )
    Source.objects.filter(pk=source.pk, warning__startswith=PAUSED_PREFIX).update(warning="")


def do_resume_paused_extraction(*, workspace: Workspace) -> dict[int, int]:
    """When the workspace's budget is no longer spent, its paused sources go on: the pause
    cleared and their waiting documents queued now. Returns {source id: documents queued}."""
    if MonthlyBudget.of(workspace).spent_out():
        return {}
    paused = list(
        Source.objects.for_workspace(workspace)
        .filter(extraction__status=ExtractionStatus.PAUSED)
        .order_by("pk")
    )
    for source in paused:
        do_clear_pause(source=source)
    return do_requeue_waiting_work(source_ids=[source.pk for source in paused])


def do_set_workspace_llm_budget(*, workspace: Workspace, amount: object) -> Workspace:
    """A workspace admin sets the workspace's monthly LLM budget (a number, 0 for no limit,
    None for the server's default); extraction paused by the old one goes on at once when
    the new one is not spent."""
    with transaction.atomic():
        workspace = do_set_llm_monthly_budget(workspace=workspace, amount=amount)
        do_resume_paused_extraction(workspace=workspace)
    return workspace

"""`GET /status/`: the running system for staff, in the admin's look: the scheduled upkeep
jobs (interval, last and next run, outcome, message, and the details the public health
report leaves out) and the workers' heartbeats.

Signed-out visitors are sent to the admin's sign-in; signed-in people who are not staff
are refused (403): the details name workspaces and quote errors.
"""

from __future__ import annotations

import json

from django.contrib import admin
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from system.selectors import get_upkeep_details, get_worker_rows


@require_GET
def status(request: HttpRequest) -> HttpResponse:
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path(), reverse("admin:login"))
    if not request.user.is_staff:
        return HttpResponse("Staff only.\n", status=403, content_type="text/plain")
    jobs = [
        {**job, "details_json": json.dumps(job["details"], indent=2) if job["details"] else ""}
        for job in get_upkeep_details()
    ]
    context = {
        **admin.site.each_context(request),
        "title": "System status",
        "jobs": jobs,
        "workers": get_worker_rows(),
    }
    return render(request, "system/status.html", context)

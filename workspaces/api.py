"""API routes of the workspaces app: who am I, workspaces, members, tokens.

Convention for every app: workspace resources live under `/workspaces/{slug}/...`; a
handler first calls `get_workspace_access(request, slug, role=...)` (NotFound for strangers,
PermissionDenied for too low a role), then one action or selector.
"""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Router, Status
from ninja.pagination import LimitOffsetPagination, paginate

from workspaces.actions.tokens import do_create_api_token, do_revoke_api_token
from workspaces.actions.workspaces import (
    do_create_workspace,
    do_request_workspace_deletion,
    do_set_membership,
    do_update_workspace,
)
from workspaces.auth import get_caller, get_workspace_access
from workspaces.errors import NotFound, PermissionDenied
from workspaces.models import ApiToken, Membership, Role, Workspace
from workspaces.schemas import (
    MemberIn,
    MemberOut,
    MeOut,
    TokenCreated,
    TokenIn,
    TokenOut,
    WorkspaceDeletionOut,
    WorkspaceIn,
    WorkspaceOut,
    WorkspacePatch,
)
from workspaces.selectors import (
    get_api_token_for_workspace,
    get_api_tokens,
    get_members,
    get_workspaces_for_user,
    require_role,
)

router = Router(tags=["workspaces"])


def _workspace_out(workspace: Workspace, role: str | None) -> WorkspaceOut:
    return WorkspaceOut(
        slug=workspace.slug,
        name=workspace.name,
        description=workspace.description,
        created_at=workspace.created_at,
        role=role,
    )


def _token_out(token: ApiToken) -> dict[str, object]:
    return {
        "id": token.pk,
        "name": token.name,
        "prefix": token.prefix,
        "username": token.user.get_username(),
        "created_at": token.created_at,
        "last_used_at": token.last_used_at,
        "revoked_at": token.revoked_at,
    }


def _member_out(membership: Membership) -> MemberOut:
    return MemberOut(
        username=membership.user.get_username(),
        role=membership.role,
        created_at=membership.created_at,
    )


@router.get("/me", response=MeOut, summary="The caller and their workspaces")
def me(request: HttpRequest) -> MeOut:
    caller = get_caller(request)
    roles = dict(Membership.objects.filter(user=caller.user).values_list("workspace_id", "role"))
    workspaces = get_workspaces_for_user(caller.user, api_token=caller.api_token)
    return MeOut(
        username=caller.user.get_username(),
        email=getattr(caller.user, "email", ""),
        is_staff=bool(getattr(caller.user, "is_staff", False)),
        token_workspace=caller.api_token.workspace.slug if caller.api_token else None,
        workspaces=[_workspace_out(ws, roles.get(ws.pk)) for ws in workspaces],
    )


@router.get("/workspaces", response=list[WorkspaceOut], summary="Workspaces the caller belongs to")
@paginate(LimitOffsetPagination)
def list_workspaces(request: HttpRequest) -> list[WorkspaceOut]:
    caller = get_caller(request)
    roles = dict(Membership.objects.filter(user=caller.user).values_list("workspace_id", "role"))
    workspaces = get_workspaces_for_user(caller.user, api_token=caller.api_token)
    return [_workspace_out(ws, roles.get(ws.pk)) for ws in workspaces]


@router.post("/workspaces", response={201: WorkspaceOut}, summary="Create a workspace (staff)")
def create_workspace(request: HttpRequest, payload: WorkspaceIn) -> Status[WorkspaceOut]:
    caller = get_caller(request)
    if caller.api_token is not None or not getattr(caller.user, "is_staff", False):
        raise PermissionDenied("Only staff, signed in with a session, may create workspaces.")
    workspace = do_create_workspace(
        slug=payload.slug, name=payload.name, description=payload.description, owner=caller.user
    )
    return Status(201, _workspace_out(workspace, Role.ADMIN))


@router.get("/workspaces/{slug}", response=WorkspaceOut, summary="One workspace")
def get_workspace(request: HttpRequest, slug: str) -> WorkspaceOut:
    membership = get_workspace_access(request, slug)
    return _workspace_out(membership.workspace, membership.role)


@router.patch("/workspaces/{slug}", response=WorkspaceOut, summary="Rename or describe (admin)")
def update_workspace(request: HttpRequest, slug: str, payload: WorkspacePatch) -> WorkspaceOut:
    membership = get_workspace_access(request, slug, role=Role.ADMIN)
    workspace = do_update_workspace(
        workspace=membership.workspace, name=payload.name, description=payload.description
    )
    return _workspace_out(workspace, membership.role)


@router.delete(
    "/workspaces/{slug}",
    response={202: WorkspaceDeletionOut},
    summary="Delete a workspace and everything in it (admin; in the background)",
)
def delete_workspace(request: HttpRequest, slug: str) -> Status[WorkspaceDeletionOut]:
    """From the answer on, the workspace is missing (404) to everyone and in no list; its
    rows, blobs and graph projection are removed in batches by the worker. Its admins may
    ask, signed in or with a token; so may staff signed in with a session, like creating."""
    caller = get_caller(request)
    if caller.api_token is None and getattr(caller.user, "is_staff", False):
        workspace = Workspace.objects.filter(slug=slug, deletion_requested_at=None).first()
        if workspace is None:
            raise NotFound(f"Workspace {slug!r} not found.")
    else:
        workspace = get_workspace_access(request, slug, role=Role.ADMIN).workspace
    workspace = do_request_workspace_deletion(workspace=workspace, actor=caller.user)
    return Status(
        202,
        WorkspaceDeletionOut(
            slug=workspace.slug,
            name=workspace.name,
            state=workspace.state,
            deletion_requested_at=workspace.deletion_requested_at,
        ),
    )


@router.get("/workspaces/{slug}/members", response=list[MemberOut], summary="Members and roles")
@paginate(LimitOffsetPagination)
def list_members(request: HttpRequest, slug: str) -> list[MemberOut]:
    membership = get_workspace_access(request, slug)
    return [_member_out(m) for m in get_members(membership.workspace)]


@router.post(
    "/workspaces/{slug}/members", response=MemberOut, summary="Add a member or set a role (admin)"
)
def set_member(request: HttpRequest, slug: str, payload: MemberIn) -> MemberOut:
    membership = get_workspace_access(request, slug, role=Role.ADMIN)
    changed = do_set_membership(
        workspace=membership.workspace, username=payload.username, role=payload.role
    )
    return _member_out(changed)


@router.get(
    "/workspaces/{slug}/tokens",
    response=list[TokenOut],
    summary="API tokens (yours; all for admins)",
)
@paginate(LimitOffsetPagination)
def list_tokens(request: HttpRequest, slug: str) -> list[dict[str, object]]:
    caller = get_caller(request)
    membership = get_workspace_access(request, slug)
    owner = None if membership.allows(Role.ADMIN) else caller.user
    return [_token_out(t) for t in get_api_tokens(membership.workspace, user=owner)]


@router.post(
    "/workspaces/{slug}/tokens", response={201: TokenCreated}, summary="Create an API token"
)
def create_token(request: HttpRequest, slug: str, payload: TokenIn) -> Status[dict[str, object]]:
    caller = get_caller(request)
    membership = get_workspace_access(request, slug)
    if caller.api_token is not None:
        raise PermissionDenied("API tokens cannot create tokens; sign in to create one.")
    issued = do_create_api_token(
        workspace=membership.workspace, user=caller.user, name=payload.name
    )
    return Status(201, {**_token_out(issued.token), "token": issued.plaintext})


@router.delete(
    "/workspaces/{slug}/tokens/{token_id}", response=TokenOut, summary="Revoke an API token"
)
def revoke_token(request: HttpRequest, slug: str, token_id: int) -> dict[str, object]:
    caller = get_caller(request)
    membership = get_workspace_access(request, slug)
    token = get_api_token_for_workspace(membership.workspace, token_id)
    if token.user_id != caller.user.pk:
        require_role(membership, Role.ADMIN)
    return _token_out(do_revoke_api_token(token=token))

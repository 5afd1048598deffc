"""`manage.py mcp --workspace SLUG --token-env NAME`: the MCP server over stdio, for desktop
hosts that start it as a child process (docs/agents.md).

The token is read from the environment variable NAME (never from the command line, where
other users of the machine can read it) and must belong to workspace SLUG; it then decides
everything, as over HTTP. stdout carries the protocol and nothing else: the SDK points
file descriptor 1 at stderr while it serves, and logs go to stderr.
"""

from __future__ import annotations

import logging
import os
from typing import Any

import anyio
from django.core.management.base import BaseCommand, CommandError, CommandParser
from mcp.server.stdio import stdio_server

from agents.access import InvalidToken, access_for_token
from agents.server import build_server
from workspaces.errors import NotFound

logger = logging.getLogger(__name__)


class Command(BaseCommand):
    help = "Serve the MCP server over stdio for one workspace (token from an environment variable)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--workspace", required=True, metavar="SLUG")
        parser.add_argument(
            "--token-env",
            required=True,
            metavar="NAME",
            help="the environment variable holding the workspace API token (glm_…)",
        )

    def handle(self, *args: Any, workspace: str, token_env: str, **options: Any) -> None:
        plaintext = os.environ.get(token_env, "").strip()
        if not plaintext:
            raise CommandError(f"The environment variable {token_env} holds no API token.")
        try:
            access = access_for_token(plaintext, transport="stdio", slug=workspace)
        except InvalidToken as exc:
            raise CommandError(str(exc)) from None
        except NotFound:
            raise CommandError(
                f"The token in {token_env} does not belong to workspace {workspace!r}."
            ) from None
        server = build_server(access)
        logger.info("MCP server on stdio for workspace %s (%s)", workspace, access.role)

        async def serve() -> None:
            async with stdio_server() as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())

        anyio.run(serve)

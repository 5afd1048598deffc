import logging

from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "agents"
    verbose_name = "Agents (MCP server)"

    def ready(self) -> None:
        # The HTTP endpoint starts and stops the SDK's session manager and transport once
        # per request (stateless mode, agents/views.py); their INFO lines about that would
        # be log lines per tool call saying nothing.
        for name in ("mcp.server.streamable_http_manager", "mcp.server.streamable_http"):
            logging.getLogger(name).setLevel(logging.WARNING)

"""Project configuration: settings, URLs, WSGI/ASGI entry points, the embedded database."""

"""Django database backend for the embedded PostgreSQL server (ENGINE "system.embedded_db").

It is Django's own PostgreSQL backend plus one step: before connecting, make sure the
embedded server is running (starting or recovering it) and point HOST/PORT at its socket.
Settings therefore stay free of side effects; the server starts on first real use.
"""

# Graphloom image for docker-compose and production: gunicorn web + task worker.
# The front-end vendor files are built from npm in a separate stage; nothing third-party
# is committed to the repository.

FROM node:20-bookworm-slim AS frontend
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY frontend ./frontend
RUN npm run build

FROM python:3.12-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DJANGO_SETTINGS_MODULE=config.settings.production
WORKDIR /app
# Debian's Chromium headless shell: a crawl asked to `render` drives it for the pages that
# need a browser (ingest/crawler/render.py looks for it on PATH; without a Chromium such a
# crawl is refused when it is created). The same package `make test` installs for the suite.
RUN apt-get update \
    && apt-get install -y --no-install-recommends chromium-headless-shell \
    && rm -rf /var/lib/apt/lists/*
COPY requirements.lock pyproject.toml ./
RUN pip install --no-cache-dir -r requirements.lock
COPY . .
COPY --from=frontend /src/static/vendor ./static/vendor
RUN pip install --no-cache-dir --no-deps -e . \
    && DJANGO_SETTINGS_MODULE=config.settings.base DATABASE_URL=postgresql://build@localhost/build \
       python manage.py collectstatic --noinput \
    && useradd --create-home --uid 1000 graphloom \
    && mkdir -p /app/var/media && chown -R graphloom /app/var
USER graphloom
EXPOSE 8000
# config/gunicorn.py: /metrics sums the latency histograms of every worker process.
CMD ["gunicorn", "config.wsgi", "-c", "python:config.gunicorn", "--bind", "0.0.0.0:8000", "--workers", "3", "--timeout", "120"]
